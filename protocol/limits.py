# Every bound the wire formats enforce, in one place, each with its reason.
# Receivers check these before allocating, so a hostile peer cannot make a
# decoder hold more than a few of these sizes at once.
"""Named protocol limits (docs/protocol.txt, section 'Limits')."""

# A handshake line is a few fixed tokens: 64-hex nonces and MACs, a name.
# Anything longer before authentication is refused without buffering it.
MAX_HANDSHAKE_LINE = 512

# One line of the control protocol after the handshake: an assignment or a
# DONE header carries one URL plus a few short fields.
MAX_LINE = 16 * 1024

# Longer URLs are almost always traps or garbage; 8 KiB is what common web
# servers accept in a request line, so nothing legitimate is lost.
MAX_URL_LEN = 8 * 1024

# RFC 1035: a host name is at most 253 characters in text form.
MAX_HOST_LEN = 253

# A spider's self-chosen name (host-pid) for operators' displays.
MAX_NAME_LEN = 64

# Capability names a spider announces in its AUTH (caps=, docs/protocol.txt
# 3.1): this version defines two; room for later ones, and the AUTH line
# still fits MAX_HANDSHAKE_LINE (each name is at most 16 characters).
MAX_CAPS = 8

# Free text in ERROR lines and DONE reasons: enough for a curl message.
MAX_REASON_LEN = 512

# Key and value of one extension field (key=value) on an assignment or DONE.
MAX_EXTRA_KEY_LEN = 32
MAX_EXTRAS = 16

# Settings announced in a handshake; a real server sends about ten.
MAX_SETTINGS = 64
MAX_SETTING_VALUE_LEN = 1024  # octets of UTF-8, so a SET line fits MAX_SETTING_LINE
# A SET line: "SET ", a key of at most 32 characters, a space, the value.
MAX_SETTING_LINE = 4 + 32 + 1 + MAX_SETTING_VALUE_LEN

# Credits: one GET asks for at most this many URLs, and a spider may hold at
# most MAX_CREDIT outstanding, so a server never queues unbounded work.
MAX_GET = 10_000
MAX_CREDIT = 100_000

# Outlinks in one DONE: pages with more links than this are link farms;
# the block is length-prefixed so its size is known before it is read.
MAX_OUTLINKS = 10_000
MAX_OUTLINKS_BYTES = 4 * 1024 * 1024

# A body returned on a DONE line (robots.txt, sitemaps, feeds the urlserver
# parses itself). RFC 9309 asks crawlers to parse at least 500 KiB of
# robots.txt; 512 KiB covers that with room for a header block.
MAX_DONE_BODY = 512 * 1024

# Links in one LINKS batch between urlserver partitions (docs/protocol.txt
# 5.10): the outlinks of a DONE fit one batch, and a receiver holds at most
# one batch's lines before it answers.
MAX_PEER_LINKS = MAX_OUTLINKS

# Transaction ids in one WORKING line (also bounded by MAX_LINE).
MAX_WORKING_IDS = 1_000

# Decimal ids on the wire are unsigned 63-bit so every language can hold them.
MAX_ID = 2**63 - 1

# Binary record: doc_len is a u32, but a store refuses documents larger than
# this hard cap whatever Max_Doc_Size says, so one record never needs more.
MAX_DOC_LEN = 256 * 1024 * 1024

# A record's extension fields (docs/protocol.txt 6.3): the outlinks block of
# a DONE (MAX_OUTLINKS_BYTES), a request header block (the spider's are under
# 1 KiB) and room to spare; checked with the header, before it is buffered.
MAX_EXT_LEN = 8 * 1024 * 1024

# Default document cap announced when an operator sets none (Max_Doc_Size).
DEFAULT_MAX_DOC_SIZE = 16 * 1024 * 1024

# Store -> spider frames are small and fixed or length-prefixed text.
MAX_FRAME_TEXT = 1024

# A store's zstd dictionary in a DICT frame (docs/protocol.txt 6.7): the
# store trains 1 MiB by default (--dict-size); 16 times that is room to
# spare, and a spider holds one per store.
MAX_DICT_LEN = 16 * 1024 * 1024
