# Conflictology's server as a container image: `docker build -t conflictology .` then
# `docker run -p 8000:8000 conflictology` (rooms in memory, SQLite in the /data volume), or the whole
# site with deploy/compose.yaml. Every `serve` flag can be set as CONFLICTOLOGY_<FLAG> (docs/deploy.md).

# Any image with Python 3.11+ and pip (the project's container test builds on one made from Debian's
# own packages, where no image registry is reachable).
ARG PYTHON_IMAGE=python:3.12-slim

FROM ${PYTHON_IMAGE} AS build
# (Debian's own Python marks its packages as the system's: this image is the system.)
ENV PIP_BREAK_SYSTEM_PACKAGES=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
# Wheels of the project and of everything it needs (PostgreSQL's driver included), built once here.
RUN pip wheel --no-cache-dir --wheel-dir /wheels ".[postgres]"

FROM ${PYTHON_IMAGE}
ENV PIP_BREAK_SYSTEM_PACKAGES=1
RUN useradd --system --uid 10001 --create-home --home-dir /data conflictology
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels "conflictology[postgres]" && rm -rf /wheels
USER conflictology
WORKDIR /data
# Listen on every interface, on $PORT (what a PaaS sets); the embedded SQLite file lives in /data.
ENV CONFLICTOLOGY_HOST=0.0.0.0 \
    PORT=8000 \
    XDG_DATA_HOME=/data \
    PYTHONUNBUFFERED=1
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["python3", "-c", "import os, urllib.request; port = os.environ.get('CONFLICTOLOGY_PORT') or os.environ['PORT']; urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=2)"]
CMD ["conflictology", "serve"]
