# memflow's HTTP API (and MCP server), built once from this checkout:
#   docker compose --profile server build      (docker-compose.yml runs it as the "memflow" service)
# Everything is installed here, at build time; a container only migrates and serves.
FROM python:3.12.8-slim AS build
WORKDIR /src
COPY pyproject.toml README.md alembic.ini ./
COPY memflow ./memflow
COPY alembic ./alembic
COPY sql ./sql
RUN python -m venv /venv && /venv/bin/pip install --no-cache-dir '.[server]'

FROM python:3.12.8-slim
COPY --from=build /venv /venv
RUN useradd --system --create-home --home-dir /home/memflow memflow
USER memflow
WORKDIR /home/memflow
ENV PATH=/venv/bin:$PATH PYTHONUNBUFFERED=1
EXPOSE 8080
# The schema first (a no-op when current), then the API; MEMFLOW_DATABASE_URL and
# MEMFLOW_API_KEYS come from the environment (memflow serve refuses 0.0.0.0 without keys).
CMD ["sh", "-c", "memflow db upgrade && exec memflow serve --host 0.0.0.0 --port 8080"]
