"""S10: content that holds a credential is never stored. Credentials of every common shape are
planted in random text and must all be found; ordinary sentences must not be flagged."""

from __future__ import annotations

import base64
import json
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.memory.changes.checks import check_changes
from app.memory.changes.credentials import credential_reason

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64URL = ALNUM + "-_"


def chars(alphabet: str, size: int, max_size: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=size, max_size=max_size or size)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# Passwords as people say them: letters, digits and symbols, at least one digit or symbol.
passwords = st.builds(
    lambda head, tail, mark: head + mark + tail,
    chars(string.ascii_letters, 3, 10),
    chars(ALNUM + "!#$%&*+-_@", 0, 8),
    st.sampled_from([*string.digits, "#", "$", "%", "&", "*", "@"]),
)
spoken_names = st.sampled_from(
    [
        "password",
        "Password",
        "PASSWORD",
        "passwd",
        "passphrase",
        "passcode",
        "pwd",
        "wifi password",
        "password for the router",
        "password for my bank account",
        "password to the admin panel",
        "login password",
        "root password",
        "secret",
        "client secret",
        "API key",
        "api_key",
        "access token",
        "auth token",
        "pw",
        "wifi key",
        "network key",
        "door code",
        "alarm code",
        "passwords",
    ]
)
spoken_links = st.sampled_from(
    [" is ", " was ", ": ", " = ", "=", " is now ", " will be ", " is still ", " is actually ",
     "'s ", " are "]
)


@st.composite
def prose_passwords(draw: st.DrawFn) -> str:
    owner = draw(st.sampled_from(["my ", "our ", "the ", "Ana's ", ""]))
    name, link, value = draw(spoken_names), draw(spoken_links), draw(passwords)
    quote = draw(st.sampled_from(["", '"', "'", "`"]))
    return f"{owner}{name}{link}{quote}{value}{quote}"


@st.composite
def jwts(draw: st.DrawFn) -> str:
    header = {"alg": draw(st.sampled_from(["HS256", "RS256", "ES256"])), "typ": "JWT"}
    claims = {"sub": draw(chars(ALNUM, 4, 12)), "iat": draw(st.integers(10**9, 2 * 10**9))}
    signature = draw(chars(B64URL, 43))
    parts = [b64url(json.dumps(header).encode()), b64url(json.dumps(claims).encode()), signature]
    return ".".join(parts)


@st.composite
def private_keys(draw: st.DrawFn) -> str:
    label = draw(st.sampled_from(["RSA ", "EC ", "OPENSSH ", "DSA ", "ENCRYPTED ", ""]))
    lines = draw(st.lists(chars(ALNUM + "+/", 64), min_size=1, max_size=4))
    body = "\n".join(["MII" + lines[0][3:], *lines[1:]])
    return f"-----BEGIN {label}PRIVATE KEY-----\n{body}\n-----END {label}PRIVATE KEY-----"


hosts = st.sampled_from(
    ["db.example.com", "example.org:5432", "10.0.0.5", "files.acme.io", "localhost:8080"]
)


@st.composite
def urls_with_userinfo(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["https", "http", "postgres", "mysql", "redis", "ftp", "amqp"]))
    user = draw(chars(string.ascii_lowercase, 3, 10))
    password = draw(chars(ALNUM + "!$*-_~", 4, 16))
    path = draw(st.sampled_from(["", "/", "/app", "/repo.git", "/0"]))
    return f"{scheme}://{user}:{password}@{draw(hosts)}{path}"


@st.composite
def urls_with_secret_query(draw: st.DrawFn) -> str:
    name = draw(
        st.sampled_from(
            [
                "token",
                "access_token",
                "api_key",
                "apikey",
                "key",
                "sig",
                "signature",
                "secret",
                "password",
                "X-Amz-Signature",
                "X-Amz-Credential",
                "auth",
            ]
        )
    )
    value = draw(chars(ALNUM + "-_%", 12, 40))
    before = draw(st.sampled_from(["?", "?page=2&", "?utm_source=mail&"]))
    path = draw(st.sampled_from(["/share", "/download/report.pdf", "/hooks/ci", ""]))
    scheme = draw(st.sampled_from(["https", "http"]))
    return f"{scheme}://{draw(hosts)}{path}{before}{name}={value}"


def shaped(prefix: str, alphabet: str, size: int) -> st.SearchStrategy[str]:
    return chars(alphabet, size).map(lambda body: prefix + body)


api_keys = st.one_of(
    shaped("sk-", ALNUM, 48),  # OpenAI
    shaped("sk-proj-", B64URL, 64),  # OpenAI project key
    shaped("sk-ant-api03-", B64URL, 40),  # Anthropic
    shaped("sk_live_", ALNUM, 24),  # Stripe
    shaped("rk_live_", ALNUM, 24),  # Stripe restricted key
    shaped("ghp_", ALNUM, 36),  # GitHub
    shaped("gho_", ALNUM, 36),
    shaped("github_pat_", ALNUM + "_", 82),
    shaped("glpat-", B64URL, 20),  # GitLab
    shaped("AKIA", UPPER_DIGITS, 16),  # AWS access key id
    shaped("ASIA", UPPER_DIGITS, 16),  # AWS temporary key id
    shaped("AIza", B64URL, 35),  # Google
    shaped("npm_", ALNUM, 36),  # npm
    chars(B64URL, 70, 160).map(lambda body: "pypi-AgEIcHlwaS5vcmc" + body),  # PyPI
    shaped("SG.", B64URL, 22).flatmap(lambda head: shaped(head + ".", B64URL, 43)),  # SendGrid
    st.builds(
        lambda kind, a, b, c: f"xox{kind}-{a}-{b}-{c}",  # Slack
        st.sampled_from("bpars"),
        chars(string.digits, 10, 13),
        chars(string.digits, 10, 13),
        chars(ALNUM, 24),
    ),
    st.builds(
        lambda a, b: f"{a}:AA{b}",  # Telegram bot token
        chars(string.digits, 8, 10),
        chars(B64URL, 33),
    ),
)
bearer_tokens = st.builds(
    lambda prefix, token: prefix + token,
    st.sampled_from(["Authorization: Bearer ", "Bearer ", "bearer token "]),
    chars(B64URL + ".", 24, 60),
)

credentials = st.one_of(
    prose_passwords(),
    api_keys,
    jwts(),
    private_keys(),
    urls_with_userinfo(),
    urls_with_secret_query(),
    bearer_tokens,
)

# fmt: off
WORDS = [
    "the", "trip", "to", "Lisbon", "starts", "on", "Monday", "and", "Ana", "wants", "a", "quiet",
    "hotel", "near", "river", "budget", "flights", "dinner", "museum", "train", "station",
    "tickets", "meeting", "notes", "deploy", "is", "for", "server", "backup", "email", "phone",
    "please", "remember", "use", "this", "later", "thanks", "key", "token",
]
# fmt: on
words = st.one_of(st.sampled_from(WORDS), chars(ALNUM + ",.'?-", 1, 12))
sentences = st.lists(words, max_size=12).map(" ".join)
separators = st.sampled_from([" ", "\n", ": ", " - ", " (", ", "])
endings = st.sampled_from(["", ".", ",", ")", "!", "\n", " ok"])


# The first call loads detect-secrets' plugins; no deadline, so that is not a failure.
@settings(max_examples=500, deadline=None)
@given(sentences, separators, credentials, endings, sentences)
@example("Use", " ", "the password for the wifi is hunter22!", ".", "")
@example("", "", "AKIAIOSFODNN7EXAMPLE", "", "")
@example("Connect with", " ", "postgres://admin:S3cret@db.example.com:5432/app", "", "")
def test_a_planted_credential_is_always_found(
    before: str, separator: str, credential: str, ending: str, after: str
) -> None:
    # S10
    text = f"{before}{separator}{credential}{ending} {after}".strip()
    assert credential_reason(text) is not None, text


@settings(deadline=None)
@given(sentences, credentials, sentences)
def test_a_change_that_plants_a_credential_is_dropped(
    before: str, credential: str, after: str
) -> None:
    # S10: consolidation drops such a change and records why; nothing of it is stored
    change = {
        "op": "remember",
        "key": "note",
        "content": f"{before} {credential} {after}".strip(),
        "kind": "fact",
        "sources": ["i-01"],
    }
    kept, dropped = check_changes([change], {}, readable={"i-01"}, processed=set())
    assert kept == []
    assert [d.key for d in dropped] == ["note"]
    assert "credential" in dropped[0].reason
    # the drop is recorded, the secret is not
    assert credential not in dropped[0].proposal


ORDINARY = [
    "Our budget is 1500 EUR.",
    "The trip budget is 1500 EUR.",
    "I prefer window seats.",
    "The user's name is Ana.",
    "Ana prefers short answers with a list of changes.",
    "The password policy requires 12 characters.",
    "The password is required to log in.",
    "Ana reset her password yesterday.",
    "Ana forgot her password and will reset it tomorrow.",
    "Passwords must be rotated every 90 days.",
    "The API key is stored in the team vault.",
    "Please rotate the API key every 90 days.",
    "The token expired, so Ana asked for a new one.",
    "Use single sign-on; never share passwords in chat.",
    "The secret of good pasta is salt.",
    "The secret of success is patience.",
    "We decided to use Effect for all new services.",
    "Run the tests before you report that work is done.",
    "The docs are at https://docs.example.com/guide?page=2&lang=en.",
    "The repository is https://github.com/acme/widgets.",
    "Ana's email is ana@example.com.",
    "Call Ana at +49 30 1234567 after 10:30.",
    "Flight LH1234 departs at 09:15 from gate B22.",
    "The office DNS server is 8.8.8.8.",
    "The staging server runs on 203.0.113.7, port 8443.",
    "Invoice INV-2024-00317 is due on 2024-12-01.",
    "The booking reference is QX7K2P.",
    "Ana uses the skeleton key analogy when she explains caching.",
    "The task is tracked as sk-1234 in the old tracker.",
    "Tokens in the board game are red and blue.",
    "The key decision was to fly on Tuesday.",
    "Ana's pin on the map is the hotel near the river.",
    "The API uses bearer tokens that expire after an hour.",
    "The password for the booking site is saved in her browser.",
    "Her secret for the conference talk is practice.",
    "The token for the ferry is green.",
    "The password is hashed with bcrypt.",
    "The password is case-sensitive.",
    "Passwords are hashed and salted.",
    "The password is still required.",
    "The password is nowhere to be found.",
    "The door code is written on the note by the fridge.",
    "The passwords are kept in the team vault.",
    "Ana's pins are on the map.",
    "The password's minimum length is 12.",
    "The password's expiry policy is 90 days.",
    "Ana's boarding pass's gate is B12.",
    "The access code is sent by email before check-in.",
    "The gate code is texted by the host on arrival.",
    "The door code is taped under the mailbox.",
    "The wifi key is printed on the router.",
    "The alarm code is what Ben set last year.",
    "The pw is with Ana.",
]


@pytest.mark.parametrize("sentence", ORDINARY)
def test_an_ordinary_sentence_is_not_a_credential(sentence: str) -> None:
    # S10: only credentials are refused; ordinary facts are kept
    assert credential_reason(sentence) is None


@pytest.mark.parametrize(
    "sentence",
    ["My password's fluffy.", "The wifi password's sunflower", "The wifi key is bluebird.",
     "pw: hunter", "The alarm code is sunflower", "Ana's password's fluffy, she said."],
)
def test_a_plain_word_that_ends_the_clause_after_an_everyday_name_is_a_secret(
    sentence: str,
) -> None:
    # S10: after a possessive or an everyday code or key, a plain word is a secret where it
    # ends the clause (where more follows, the sentence speaks of the secret: ORDINARY)
    assert credential_reason(sentence) is not None


def test_the_reason_never_repeats_the_secret() -> None:
    # S10: the reason is recorded and shown; it must not carry the secret itself
    for text in [
        "my password is Xk9!mP2qL",
        "ghp_" + "a1B2c3D4e5" * 4,
        "https://bob:S3cr3tPw@example.com/",
    ]:
        reason = credential_reason(text)
        assert reason is not None
        assert "Xk9" not in reason
        assert "a1B2" not in reason
        assert "S3cr3t" not in reason
