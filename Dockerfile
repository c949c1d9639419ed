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
# The rules compiled to C from the same sources (docs/architecture.md, "The compiled rules"), into
# /opt/conflictology-native: a C compiler and Python's headers here only. Where they cannot be had, the
# directory stays empty and the image runs the rules from their source (`serve --check` says which).
COPY scripts/build_native.py ./scripts/
RUN mkdir -p /opt/conflictology-native \
 && { apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc libc6-dev python3-dev >/dev/null \
      && pip install --no-cache-dir --no-index --find-links=/wheels "conflictology[postgres]" \
      && pip install --no-cache-dir "mypy>=2.4,<2.5" "setuptools>=68" \
      && PYTHONPATH=/src/src CONFLICTOLOGY_PURE=1 CONFLICTOLOGY_NATIVE_DIR=/opt/conflictology-native \
         python3 scripts/build_native.py \
      || echo "the rules run from their source in this image"; }

FROM ${PYTHON_IMAGE}
ENV PIP_BREAK_SYSTEM_PACKAGES=1
RUN useradd --system --uid 10001 --create-home --home-dir /data conflictology
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels "conflictology[postgres]" && rm -rf /wheels
COPY --from=build /opt/conflictology-native /opt/conflictology-native
USER conflictology
WORKDIR /data
# Listen on every interface, on $PORT (what a PaaS sets); the embedded SQLite file lives in /data.
ENV CONFLICTOLOGY_HOST=0.0.0.0 \
    CONFLICTOLOGY_NATIVE_DIR=/opt/conflictology-native \
    PORT=8000 \
    XDG_DATA_HOME=/data \
    PYTHONUNBUFFERED=1
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["python3", "-c", "import os, urllib.request; port = os.environ.get('CONFLICTOLOGY_PORT') or os.environ['PORT']; urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=2)"]
CMD ["conflictology", "serve"]
