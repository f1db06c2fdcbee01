# Prism Memory's service: prism serve (HTTP API, MCP over Streamable HTTP, console, /metrics)
# with the PostgreSQL engine, from the wheel this repository builds. Debian's own Python 3.11.
#   docker build -t prism-memory .            (or: podman build -t prism-memory .)
# BASE is any Debian bookworm image: the registry's debian:bookworm-slim by default, or one
# made locally without a registry (docs/container.md).
ARG BASE=docker.io/library/debian:bookworm-slim

FROM ${BASE} AS build
# Behind a TLS-intercepting proxy: mount its CA bundle and name it (docs/container.md).
ARG PIP_CERT
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv python3-pip \
 && rm -rf /var/lib/apt/lists/*
COPY LICENSE NOTICE THIRD_PARTY_NOTICES.md README.md /src/
COPY backend/pyproject.toml /src/backend/
COPY backend/prism_memory /src/backend/prism_memory
RUN cd /src/backend && for f in LICENSE NOTICE THIRD_PARTY_NOTICES.md README.md; do \
      rm -f "$f"; cp "../$f" "$f"; done \
 && python3 -m venv /opt/prism \
 && /opt/prism/bin/pip install --no-cache-dir --quiet "/src/backend[server,postgres]"

FROM ${BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /var/lib/prism --uid 10001 prism
COPY --from=build /opt/prism /opt/prism
COPY LICENSE NOTICE THIRD_PARTY_NOTICES.md /usr/share/doc/prism-memory/
ENV PATH=/opt/prism/bin:$PATH \
    PRISM_HOST=0.0.0.0 \
    PRISM_PORT=8765 \
    PRISM_DB=/var/lib/prism/prism.db \
    HF_HUB_OFFLINE=1
USER prism
WORKDIR /var/lib/prism
VOLUME /var/lib/prism
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8765/readyz || exit 1
ENTRYPOINT ["prism"]
CMD ["serve"]
