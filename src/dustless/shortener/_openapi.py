"""The OpenAPI 3.1 description of the shortener's HTTP API (served at ``/openapi.json``)."""

from __future__ import annotations

from typing import Any

__all__ = ["openapi_spec"]

_ERROR = {
    "type": "object",
    "required": ["error", "problem"],
    "properties": {
        "error": {"type": "string", "description": "what is wrong, for people"},
        "problem": {
            "type": "string",
            "description": "a short tag for programs: malformed, control, scheme, "
            "credentials, too-long, own-domain, blocked, alias, alias-reserved, alias-shape, "
            "alias-taken, expires, max-visits, redirect, unauthorized, media-type, "
            "rate-limited, not-found, expired, visit-limit, body, query, edit, store",
        },
    },
}


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _link_response(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Link"}}},
    }


_SHORTEN = {
    "summary": "Shorten a long URL",
    "description": "Seed 003 ch. 8 §2 (POST /api/v1/data). An equal long URL (under the "
    "configured normalization policy, default rfc3986) returns its existing code with 200.",
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Shorten"}}},
    },
    "responses": {
        "201": _link_response("created (the row is committed before this is sent)"),
        "200": _link_response("this long URL (or alias) already had this link"),
        "400": _error("invalid long URL, slug, redirect, validUntil or maxVisits"),
        "401": _error("an API key is required (the server runs without --public) or unknown"),
        "415": _error("the body is not sent as application/json"),
        "403": _error("the long URL is on the blocklist"),
        "409": _error("the alias names another URL"),
        "413": _error("request body over 16 KiB"),
        "503": _error("the database is unavailable"),
        "429": {
            "description": "rate limited; see Retry-After",
            "headers": {"Retry-After": {"schema": {"type": "integer"}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        },
    },
}

_CODE = {"name": "code", "in": "path", "required": True, "schema": {"type": "string"}}
_REDIRECT = {
    "summary": "Follow a short link",
    "parameters": [_CODE],
    "responses": {
        "301": {"description": "redirect (cached by browsers: repeat clicks not counted)"},
        "302": {"description": "redirect (every click counted)"},
        "404": _error("unknown code"),
        "410": _error("the link ended: validUntil passed or maxVisits used up"),
        "429": _error("too many unknown codes from this client; see Retry-After"),
    },
}

_PATHS: dict[str, Any] = {
    "/api/v1/data/shorten": {"post": {**_SHORTEN, "operationId": "shorten"}},
    "/api/v1/data": {"post": {**_SHORTEN, "operationId": "shortenSeedPath"}},
    "/api/v1/{code}": {"get": {**_REDIRECT, "operationId": "redirectApi"}},
    "/{code}": {"get": {**_REDIRECT, "operationId": "redirect"}},
    "/api/v1/{code}/stats": {
        "get": {
            "summary": "Clicks of a link: by day, top referrer hosts, user-agent families",
            "operationId": "stats",
            "parameters": [_CODE],
            "responses": {
                "200": {
                    "description": "statistics (clicks are written in ~1 s batches)",
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Stats"}}
                    },
                },
                "401": _error("no or unknown API key (without --public-stats)"),
                "404": _error("unknown code, or a link of another key"),
            },
        }
    },
    "/api/v1/links": {
        "get": {
            "summary": "The key's links (an admin key: every link), newest first",
            "operationId": "listLinks",
            "parameters": [
                {"name": "search", "in": "query", "schema": {"type": "string"}},
                {"name": "tag", "in": "query", "schema": {"type": "string"}},
                {
                    "name": "orderBy",
                    "in": "query",
                    "schema": {
                        "type": "string",
                        "pattern": "^(dateCreated|shortCode|longUrl|title|visits)-(ASC|DESC)$",
                    },
                },
                {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1}},
                {
                    "name": "pageSize",
                    "in": "query",
                    "schema": {"type": "integer", "minimum": 1, "maximum": 100},
                },
            ],
            "responses": {
                "200": {"description": "links with totals, clicks and 30 days of daily clicks"},
                "401": _error("an API key is required"),
            },
        }
    },
    "/api/v1/links/{code}": {
        "patch": {
            "summary": "Start or end a link, limit its visits, set its title or tags "
            "(validSince, validUntil, maxVisits, title, tags; null clears)",
            "operationId": "editLink",
            "parameters": [_CODE],
            "responses": {
                "200": _link_response("the link as changed"),
                "404": _error("unknown code, or a link of another key"),
            },
        }
    },
    "/api/v1/tags": {
        "get": {
            "summary": "The key's tags (an admin key: every tag) and how many links carry each",
            "operationId": "listTags",
            "responses": {
                "200": {"description": "{tags: [{tag, links}]}"},
                "401": _error("an API key is required"),
            },
        }
    },
    "/{code}/qr": {
        "get": {
            "summary": "QR code of the short URL",
            "operationId": "qr",
            "parameters": [
                _CODE,
                {"name": "format", "in": "query", "schema": {"enum": ["svg", "png"]}},
                {"name": "scale", "in": "query", "schema": {"type": "integer"}},
            ],
            "responses": {"200": {"description": "image/svg+xml or image/png"}},
        }
    },
    "/api/v1/info": {
        "get": {
            "summary": "Whether keys are required and statistics public",
            "operationId": "info",
            "responses": {"200": {"description": "keysRequired, publicStats, shortPrefix"}},
        }
    },
}

_TAGS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 64},
    "maxItems": 32,
}
_COUNTS = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"key": {"type": "string"}, "clicks": {"type": "integer"}},
    },
}

_SCHEMAS: dict[str, Any] = {
    "Error": _ERROR,
    "Shorten": {
        "type": "object",
        "required": ["longUrl"],
        "properties": {
            "longUrl": {"type": "string", "maxLength": 2048, "description": "http or https"},
            "customSlug": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$"},
            "alias": {"type": "string", "description": "the older name of customSlug"},
            "maxVisits": {"type": "integer", "minimum": 1},
            "validUntil": {
                "description": "RFC 3339 date-time or Unix seconds; in the future",
                "oneOf": [{"type": "string", "format": "date-time"}, {"type": "number"}],
            },
            "validSince": {
                "description": "RFC 3339 date-time or Unix seconds; before it the link answers "
                "404 (Shlink's validSince)",
                "oneOf": [{"type": "string", "format": "date-time"}, {"type": "number"}],
            },
            "title": {"type": "string", "maxLength": 512},
            "redirect": {"type": "integer", "enum": [301, 302]},
            "tags": _TAGS,
            "expiresAt": {
                "description": "the older name of validUntil",
                "oneOf": [{"type": "string", "format": "date-time"}, {"type": "number"}],
            },
        },
    },
    "Link": {
        "type": "object",
        "required": ["code", "shortUrl", "longUrl", "redirect"],
        "properties": {
            "code": {"type": "string"},
            "shortUrl": {"type": "string"},
            "longUrl": {"type": "string", "description": "as stored (its rfc3986 form)"},
            "redirect": {"type": "integer", "enum": [301, 302]},
            "createdAt": {"type": ["string", "null"], "format": "date-time"},
            "title": {"type": ["string", "null"]},
            "validSince": {"type": ["string", "null"], "format": "date-time"},
            "validUntil": {"type": ["string", "null"], "format": "date-time"},
            "expiresAt": {"type": ["string", "null"], "format": "date-time"},
            "maxVisits": {"type": ["integer", "null"]},
            "visits": {"type": ["integer", "null"]},
            "status": {"enum": ["active", "not-yet-valid", "expired", "visit-limit"]},
            "qrUrl": {"type": "string"},
            "tags": _TAGS,
        },
    },
    "Stats": {
        "type": "object",
        "properties": {
            "code": {"type": "string"},
            "longUrl": {"type": "string"},
            "redirect": {"type": "integer"},
            "clicks": {"type": "integer"},
            "humanClicks": {"type": "integer"},
            "potentialBotClicks": {"type": "integer"},
            "countsEveryClick": {"type": "boolean"},
            "byDay": _COUNTS,
            "referrers": _COUNTS,
            "userAgents": _COUNTS,
        },
    },
}


def openapi_spec(base_url: str) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "dustless URL shortener",
            "version": "1",
            "description": "Seed 003 ch. 8's URL shortener: base62 codes of 7 characters, "
            "301/302 redirects, click statistics.",
        },
        "servers": [{"url": base_url.rstrip("/")}],
        "paths": _PATHS,
        "components": {
            "schemas": _SCHEMAS,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
            },
        },
        "security": [{"bearer": []}, {"apiKey": []}, {}],
    }
