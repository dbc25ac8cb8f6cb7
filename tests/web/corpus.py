# Realistic HTML responses for the store's benchmark and tests, made
# deterministically from a seed (no network, no data files).
#
# A crawl's pages come from many sites, each with its own template: a head
# full of meta tags, stylesheets and analytics scripts; a navigation menu; a
# sidebar of related links; a footer. Only the article differs from page to
# page. This module builds `sites` such templates (different class names,
# menus, scripts) and fills each page with 20-60 KB of article text drawn
# from an English-like vocabulary with a Zipf distribution, so both the
# within-page redundancy gzip sees and the across-page redundancy a trained
# dictionary sees are present, in realistic proportions.
"""Deterministic, realistic HTML responses (status line + headers + body)."""

from __future__ import annotations

import itertools
import random

_SYLLABLES = (
    "ka ther in ro ment al de tion ver ing for pro con ex com per sta ble mis ri an "
    "ow el la ne us ta po li ca ly er ti mo se di re un im ple vi sion tri ous ness "
    "ful ward ite gen port struct lo go ber man son ham ford ville ton shire"
).split()
_COMMON = (
    "the of and to a in is that for it as was with be by on not he this are or his "
    "from at which but have an they you were her she there been one all we their has "
    "would when if so no will more can what about said out up them some could into"
).split()


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words = list(_COMMON)
    while len(words) < size:
        words.append("".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))))
    return words


class Corpus:
    """`sites` site templates; page(i) is the i-th response, always the same."""

    def __init__(self, *, sites: int = 40, seed: int = 2024, min_kb: int = 20, max_kb: int = 60) -> None:
        rng = random.Random(seed)
        self.seed = seed
        self.min_len, self.max_len = min_kb * 1024, max_kb * 1024
        self.words = _vocabulary(rng, 8000)
        # Zipf weights: the r-th word is 1/r as likely as the first.
        weights = [1.0 / (r + 1) for r in range(len(self.words))]
        self.cum_weights = list(itertools.accumulate(weights))
        self.sites = [self._template(rng, i) for i in range(sites)]

    def _text(self, rng: random.Random, n: int) -> str:
        words = rng.choices(self.words, cum_weights=self.cum_weights, k=n)
        out, i = [], 0
        while i < n:
            k = rng.randint(8, 24)
            sentence = " ".join(words[i : i + k])
            out.append(sentence[:1].upper() + sentence[1:] + rng.choice(".....?!"))
            i += k
        return " ".join(out)

    def _template(self, rng: random.Random, index: int) -> dict:
        host = f"www.{self._text(rng, 1).lower().strip('.?!')}{index}.example"
        prefix = rng.choice(("site", "wp", "c", "main", "app", "ui", "page", "x"))
        css = [f'<link rel="stylesheet" href="https://{host}/static/css/{self._slug(rng)}.{rng.getrandbits(32):08x}.css">'
               for _ in range(rng.randint(2, 6))]
        js = [f'<script src="https://{host}/static/js/{self._slug(rng)}.{rng.getrandbits(32):08x}.js" defer></script>'
              for _ in range(rng.randint(2, 8))]
        analytics = (
            "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}"
            f"gtag('js',new Date());gtag('config','G-{rng.getrandbits(40):010X}',{{'anonymize_ip':true}});"
            "(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime(),event:'gtm.js'});"
            "var f=d.getElementsByTagName(s)[0],j=d.createElement(s),dl=l!='dataLayer'?'&l='+l:'';j.async=true;"
            f"j.src='https://www.googletagmanager.com/gtm.js?id='+i+dl;f.parentNode.insertBefore(j,f);}})(window,document,'script','dataLayer','GTM-{rng.getrandbits(24):06X}');</script>"
        )
        menu = [(self._slug(rng), self._text(rng, rng.randint(1, 3)).strip(".?!")) for _ in range(rng.randint(8, 40))]
        nav = "".join(
            f'<li class="{prefix}-nav__item{" " + prefix + "-nav__item--has-children" if rng.random() < 0.3 else ""}">'
            f'<a class="{prefix}-nav__link" href="/{slug}/">{label}</a></li>\n'
            for slug, label in menu
        )
        footer_cols = "".join(
            f'<div class="{prefix}-footer__col"><h4 class="{prefix}-footer__title">{self._text(rng, 2).strip(".?!")}</h4><ul>'
            + "".join(f'<li><a href="/{self._slug(rng)}/">{self._text(rng, rng.randint(1, 4)).strip(".?!")}</a></li>'
                      for _ in range(rng.randint(4, 10)))
            + "</ul></div>\n"
            for _ in range(rng.randint(3, 5))
        )
        inline_css = "<style>" + "".join(
            f".{prefix}-{self._slug(rng)}{{margin:{rng.randint(0, 40)}px {rng.randint(0, 40)}px;"
            f"padding:{rng.randint(0, 24)}px;color:#{rng.getrandbits(24):06x};font-size:{rng.randint(10, 32)}px}}"
            for _ in range(rng.randint(10, 80))
        ) + "</style>"
        icons = "".join(
            f'<symbol id="icon-{self._slug(rng)}" viewBox="0 0 24 24"><path d="'
            + " ".join(f"M{rng.randint(0, 24)}.{rng.randint(0, 9)} {rng.randint(0, 24)}.{rng.randint(0, 9)}"
                       f"L{rng.randint(0, 24)}.{rng.randint(0, 9)} {rng.randint(0, 24)}.{rng.randint(0, 9)}" for _ in range(rng.randint(3, 12)))
            + '"/></symbol>'
            for _ in range(rng.randint(10, 40))
        )
        sprite = f'<svg xmlns="http://www.w3.org/2000/svg" style="display:none">{icons}</svg>'
        config = "<script>window.__CONFIG__=" + "{" + ",".join(
            f'"{self._slug(rng)}":{{"enabled":{rng.choice(("true", "false"))},"id":"{rng.getrandbits(48):012x}","path":"/{self._slug(rng)}/"}}'
            for _ in range(rng.randint(20, 120))
        ) + "};</script>"
        return {
            "sprite": sprite, "config": config,
            "host": host, "prefix": prefix, "css": "\n".join(css), "js": "\n".join(js),
            "analytics": analytics, "nav": nav, "footer": footer_cols, "inline_css": inline_css,
            "server": rng.choice(("nginx", "Apache/2.4.58 (Ubuntu)", "cloudflare", "Microsoft-IIS/10.0", "LiteSpeed")),
            "menu": menu,
        }

    @staticmethod
    def _slug(rng: random.Random) -> str:
        return "-".join(rng.choice(_SYLLABLES) + rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 3)))

    def url(self, i: int) -> str:
        site = self.sites[i % len(self.sites)]
        return f"https://{site['host']}/articles/{i}/{random.Random(self.seed * 7919 + i).getrandbits(32):08x}.html"

    def body(self, i: int) -> bytes:
        rng = random.Random(self.seed * 1_000_003 + i)
        site = self.sites[i % len(self.sites)]
        p = site["prefix"]
        title = self._text(rng, rng.randint(4, 10)).rstrip(".?!")
        target = rng.randint(self.min_len, self.max_len)
        related = "".join(
            f'<li class="{p}-related__item"><a href="/articles/{rng.randint(1, 10**6)}/">{self._text(rng, rng.randint(4, 9)).rstrip(".?!")}</a></li>\n'
            for _ in range(rng.randint(5, 15))
        )
        head = (
            f'<!DOCTYPE html>\n<html lang="en" class="no-js">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>{title} | {site["host"]}</title>\n'
            f'<meta name="description" content="{self._text(rng, 25)}">\n'
            f'<meta property="og:title" content="{title}">\n<meta property="og:type" content="article">\n'
            f'<meta property="og:url" content="{self.url(i)}">\n<link rel="canonical" href="{self.url(i)}">\n'
            f'{site["css"]}\n{site["inline_css"]}\n{site["analytics"]}\n{site["config"]}\n</head>\n'
            f'<body class="{p}-body {p}-body--article">\n{site["sprite"]}\n<header class="{p}-header"><div class="{p}-container">'
            f'<a class="{p}-logo" href="/">{site["host"]}</a>\n<nav class="{p}-nav" aria-label="Main"><ul class="{p}-nav__list">\n{site["nav"]}</ul></nav></div></header>\n'
            f'<main class="{p}-main"><article class="{p}-article">\n<h1 class="{p}-article__title">{title}</h1>\n'
            f'<div class="{p}-article__meta">By {self._text(rng, 2).rstrip(".?!")} &middot; <time datetime="2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}">{rng.randint(1, 28)} days ago</time></div>\n'
        )
        tail = (
            f'</article>\n<aside class="{p}-sidebar"><h3>Related</h3><ul class="{p}-related">\n{related}</ul></aside></main>\n'
            f'<footer class="{p}-footer"><div class="{p}-container">{site["footer"]}'
            f'<p class="{p}-footer__copy">&copy; 2025 {site["host"]}. All rights reserved.</p></div></footer>\n{site["js"]}\n</body>\n</html>\n'
        )
        parts = [head]
        size = len(head) + len(tail)
        article_end = size + rng.randint(3 * 1024, 14 * 1024)  # a typical article's text
        while size < min(article_end, target):
            para = f'<p class="{p}-article__para">{self._text(rng, rng.randint(30, 120))}</p>\n'
            if rng.random() < 0.15:
                para = f'<h2 class="{p}-article__h2">{self._text(rng, rng.randint(3, 8)).rstrip(".?!")}</h2>\n' + para
            parts.append(para)
            size += len(para)
        parts.append(f'<section class="{p}-more"><h2 class="{p}-more__title">More stories</h2>\n')
        while size < target:  # the teaser grid most article pages end with
            slug, label = rng.choice(site["menu"])
            card = (
                f'<div class="{p}-card {p}-card--{slug}"><a class="{p}-card__link" href="/articles/{rng.randint(1, 10**6)}/">'
                f'<picture class="{p}-card__media"><source type="image/webp" srcset="https://{site["host"]}/img/{rng.getrandbits(64):016x}-480.webp 480w, '
                f'https://{site["host"]}/img/{rng.getrandbits(64):016x}-960.webp 960w" sizes="(max-width: 600px) 480px, 960px">'
                f'<img class="{p}-card__img" loading="lazy" width="480" height="270" alt="" src="https://{site["host"]}/img/{rng.getrandbits(64):016x}-480.jpg"></picture>'
                f'<span class="{p}-card__kicker">{label}</span><h3 class="{p}-card__title">{self._text(rng, rng.randint(5, 12)).rstrip(".?!")}</h3></a>'
                f'<svg class="{p}-icon {p}-icon--bookmark" aria-hidden="true"><use href="#icon-bookmark"></use></svg></div>\n'
            )
            parts.append(card)
            size += len(card)
        parts.append("</section>\n")
        parts.append(tail)
        return "".join(parts).encode("utf-8")

    def response(self, i: int) -> bytes:
        """Status line, headers, blank line, body: a record's document data."""
        body = self.body(i)
        site = self.sites[i % len(self.sites)]
        rng = random.Random(i)
        head = (
            "HTTP/1.1 200 OK\r\n"
            f"Date: Mon, {rng.randint(1, 28):02d} Dec 2025 {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} GMT\r\n"
            f"Server: {site['server']}\r\n"
            "Content-Type: text/html; charset=utf-8\r\n"
            "Content-Encoding: gzip\r\n"
            "Vary: Accept-Encoding\r\n"
            f'ETag: "{rng.getrandbits(64):016x}"\r\n'
            "Cache-Control: max-age=600\r\n"
            "\r\n"
        )
        return head.encode("ascii") + body
