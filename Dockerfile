# The service image for docker-compose.yml: the app and its locked packages; Neo4j runs in its
# own container, so no Java or Maven here.
FROM python:3.11-slim
WORKDIR /srv
COPY requirements.lock pyproject.toml README.md ./
RUN pip install --no-cache-dir -r requirements.lock
COPY app ./app
COPY cypher ./cypher
RUN pip install --no-cache-dir --no-deps -e .
EXPOSE 8000
CMD ["openbot-memory", "serve", "--host", "0.0.0.0", "--port", "8000"]
