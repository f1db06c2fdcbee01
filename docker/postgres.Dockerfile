# PostgreSQL 17 with pgvector from Debian trixie's own packages (postgresql-17-pgvector), for
# compose.yaml. Any PostgreSQL >= 14 with pgvector works as well (docs/postgres.md).
ARG BASE=docker.io/library/debian:trixie-slim
FROM ${BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-17 postgresql-17-pgvector \
 && rm -rf /var/lib/apt/lists/*
COPY docker/postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint
ENV PATH=/usr/lib/postgresql/17/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
VOLUME /var/lib/postgresql/data
EXPOSE 5432
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=5 \
  CMD pg_isready -h 127.0.0.1 -U "${POSTGRES_USER:-prism}" -d "${POSTGRES_DB:-prism}" || exit 1
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint"]
