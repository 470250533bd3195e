#!/usr/bin/env python3
"""Post the `contracts review` Markdown on a pull request as one comment, or update it.

The comment is found by the hidden marker `<!-- contracts-review -->` that starts the review's
Markdown: the first comment of the pull request whose body starts with it is updated in place
(PATCH), and when there is none a new one is created (POST). Comments without the marker are
never touched. Listing follows GitHub's pagination (the `Link: <...>; rel="next"` header), 100
comments a page.

Usage: pr-comment.py REVIEW.md

Environment (GitHub Actions sets the first two; the action passes the others):
  GITHUB_API_URL     the REST API root [default: https://api.github.com]
  GITHUB_REPOSITORY  OWNER/REPO
  GITHUB_TOKEN       a token that may write pull-request comments
  PR_NUMBER          the pull request's number [default: pull_request.number in the
                     event file at GITHUB_EVENT_PATH]

Exit 0 when the comment was created or updated (its URL on stdout) or the review is empty
(nothing is sent), 2 for a missing input, 3 when GitHub refused or could not be reached.
Python 3 standard library only.
"""
import json
import os
import re
import sys
import urllib.error
import urllib.request

MARKER = "<!-- contracts-review -->"
# GitHub refuses a comment body longer than this many characters (422).
MAX_BODY = 65536
CUT_NOTE = "\n\n*(The review was cut here to fit a comment: the whole review is in the job's log.)*\n"
API_VERSION = "2022-11-28"
NEXT_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="next"')


class Refused(Exception):
    pass


def fail(code, message):
    print(f"pr-comment: {message}", file=sys.stderr)
    sys.exit(code)


def settings():
    env = os.environ
    api = env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    repo = env.get("GITHUB_REPOSITORY", "")
    token = env.get("GITHUB_TOKEN", "")
    number = env.get("PR_NUMBER", "")
    if not number and env.get("GITHUB_EVENT_PATH"):
        try:
            with open(env["GITHUB_EVENT_PATH"], encoding="utf-8") as f:
                number = str((json.load(f).get("pull_request") or {}).get("number") or "")
        except (OSError, ValueError) as e:
            fail(2, f"cannot read the event file {env['GITHUB_EVENT_PATH']}: {e}")
    missing = [n for n, v in [("GITHUB_REPOSITORY", repo), ("GITHUB_TOKEN", token)] if not v]
    if not number:
        missing.append("PR_NUMBER (or a pull_request event at GITHUB_EVENT_PATH)")
    if missing:
        fail(2, "missing " + ", ".join(missing))
    if not re.fullmatch(r"[^/\s]+/[^/\s]+", repo):
        fail(2, f"GITHUB_REPOSITORY is {repo!r}, not OWNER/REPO")
    if not number.isdigit():
        fail(2, f"the pull request number is {number!r}, not a number")
    return api, repo, token, int(number)


def body_of(path):
    try:
        with open(path, encoding="utf-8") as f:
            body = f.read()
    except (OSError, UnicodeDecodeError) as e:
        fail(2, f"cannot read {path}: {e}")
    if not body.strip():
        return None
    if not body.startswith(MARKER):
        # Still findable by the next run, whatever wrote the file.
        body = MARKER + "\n" + body
    if len(body) > MAX_BODY:
        body = body[: MAX_BODY - len(CUT_NOTE)] + CUT_NOTE
    return body


def call(method, url, token, payload=None):
    """One request; the decoded JSON and the response's next-page URL, if any."""
    data = None
    headers = {
        "Accept": "application/vnd.github+json",
        "Authorization": f"Bearer {token}",
        "X-GitHub-Api-Version": API_VERSION,
        "User-Agent": "contracts-pr-comment",
    }
    if payload is not None:
        data = json.dumps(payload).encode("utf-8")
        headers["Content-Type"] = "application/json; charset=utf-8"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode("utf-8")
            link = response.headers.get("Link", "")
    except urllib.error.HTTPError as e:
        detail = e.read().decode("utf-8", "replace")
        try:
            detail = json.loads(detail).get("message", detail)
        except (ValueError, AttributeError):
            pass
        hint = ""
        if e.code in (401, 403, 404):
            hint = (" (the token needs `pull-requests: write`; a pull request from a fork gets a"
                    " read-only token)")
        raise Refused(f"{method} {url}: HTTP {e.code}: {detail}{hint}") from None
    except (urllib.error.URLError, OSError) as e:
        raise Refused(f"{method} {url}: {e}") from None
    match = NEXT_LINK.search(link)
    return (json.loads(text) if text else None), (match.group(1) if match else None)


def find_comment(api, repo, number, token):
    """The id of the first comment whose body starts with the marker, or None."""
    url = f"{api}/repos/{repo}/issues/{number}/comments?per_page=100"
    while url:
        # The token goes to the API only, never to a host a Link header names.
        if not url.startswith(api + "/"):
            raise Refused(f"the next page {url} is not under {api}")
        page, url = call("GET", url, token)
        for comment in page or []:
            if (comment.get("body") or "").startswith(MARKER):
                return comment["id"]
    return None


def main(argv):
    if len(argv) != 2:
        fail(2, "usage: pr-comment.py REVIEW.md")
    body = body_of(argv[1])
    api, repo, token, number = settings()
    if body is None:
        # Nothing to say is not a failure of the step: the job's outcome is check's and review's.
        print(f"pr-comment: {argv[1]} is empty: no comment posted", file=sys.stderr)
        return 0
    try:
        found = find_comment(api, repo, number, token)
        if found is None:
            comment, _ = call("POST", f"{api}/repos/{repo}/issues/{number}/comments", token,
                              {"body": body})
            verb = "created"
        else:
            comment, _ = call("PATCH", f"{api}/repos/{repo}/issues/comments/{found}", token,
                              {"body": body})
            verb = "updated"
    except Refused as e:
        fail(3, str(e))
    print(f"pr-comment: {verb} comment {comment.get('id')} on #{number}", file=sys.stderr)
    print(comment.get("html_url", ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
