"""The operator API's routes (placeholder until the endpoints land)."""


def api_routes(server) -> list:
    return []
