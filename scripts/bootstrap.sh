# Sourced by scripts/check and scripts/serve: checks what must be there beforehand, then
# creates .venv and installs the locked packages when requirements.lock or pyproject changed.
set -euo pipefail

fail() { echo "openbot-memory: $*" >&2; exit 1; }

command -v python3 >/dev/null || fail "Python 3.11+ is needed (python3 was not found)."
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || fail "Python 3.11+ is needed (found $(python3 --version 2>&1))."
# The local Neo4j needs Java 17+ and Maven (to fetch its jars once): as root with apt-get,
# Debian's packages are installed when missing.
if [ -z "${NEO4J_URI:-}" ] && [ "${OPENBOT_MEMORY_SKIP_APT:-}" != "1" ] && [ "$(id -u)" = "0" ] \
    && command -v apt-get >/dev/null && ! { command -v java && command -v mvn; } >/dev/null; then
  echo "Installing Java and Maven (apt-get) ..."
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless maven >/dev/null \
    || fail "apt-get could not install default-jre-headless and maven"
fi
if [ -z "${NEO4J_URI:-}" ]; then
  command -v java >/dev/null || [ -x "${JAVA_HOME:-/nonexistent}/bin/java" ] \
    || fail "Java 17+ is needed to run the local Neo4j (or set NEO4J_URI to use your own)."
  command -v mvn >/dev/null \
    || fail "Maven is needed to fetch the Neo4j jars once (or set NEO4J_URI to use your own)."
fi

stamp_of() {
  cat requirements.lock pyproject.toml clients/python/pyproject.toml | sha256sum | cut -d' ' -f1
}
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv || fail "could not create .venv (on Debian: apt-get install python3-venv)."
fi
if [ "$(cat .venv/.installed 2>/dev/null || true)" != "$(stamp_of)" ]; then
  echo "Installing Python packages into .venv ..."
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
  # The Python client (its dependencies are in the lock), for its tests and mypy.
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e clients/python
  stamp_of > .venv/.installed
fi
