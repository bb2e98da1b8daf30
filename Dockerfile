# The service image for docker-compose.yml: the app and its locked packages; Neo4j runs in its
# own container, so no Java or Maven here. It runs as an unprivileged user, not root.
FROM python:3.11-slim
WORKDIR /srv
COPY requirements.lock pyproject.toml setup.py README.md ./
RUN pip install --no-cache-dir -r requirements.lock
COPY app ./app
COPY cypher ./cypher
# A real (non-editable) install: setup.py copies cypher/ into the package.
RUN pip install --no-cache-dir --no-deps . \
    && useradd --system --uid 10001 --user-group --home-dir /home/openbot --create-home openbot
USER openbot
WORKDIR /home/openbot
EXPOSE 8000
CMD ["openbot-memory", "serve", "--host", "0.0.0.0", "--port", "8000"]
