# GeAR Studio: the Streamlit app (and the `gear` CLI) on CPU.
#   docker build -t gear-studio .                                  # app + CLI, embedded (memory) backend by default
#   docker build --build-arg WITH_LOCAL_LLM=1 -t gear-studio .      # + the embedded local LLM (compiles llama.cpp)
#   docker run -p 127.0.0.1:8501:8501 -v gear-data:/app/data gear-studio
# The demo index is built on first start into /app/data (mount a volume to keep it, or mount a prebuilt one there).
# With Elasticsearch: see docker-compose.yml and docs/elasticsearch.md.
FROM python:3.11-slim

ARG TORCH_VERSION=2.13.0
# CPU-only wheels: without this index pip would pull gigabytes of CUDA packages
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG WITH_LOCAL_LLM=0

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    GEAR_STUDIO_DATA=/app/data \
    GEAR_MODEL_DIR=/app/models

WORKDIR /app

# torch first (CPU build), so requirements.txt finds it satisfied
RUN pip install --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}"

COPY requirements.txt ./
RUN pip install -r requirements.txt

COPY pyproject.toml README.md app.py ./
COPY .streamlit/ .streamlit/
COPY gear/ gear/
COPY pages/ pages/
COPY studio/ studio/
COPY assets/ assets/
COPY scripts/ scripts/
# editable: studio.demo finds assets/ next to the package, as in a checkout
RUN pip install --no-deps -e .

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# optional: the embedded local LLM (llama-cpp-python compiles from source: 5-16 min, needs a compiler)
RUN if [ "${WITH_LOCAL_LLM}" = "1" ]; then \
      apt-get update \
      && apt-get install -y --no-install-recommends build-essential=12.* cmake=3.* \
      && bash scripts/install_local_llm.sh "$(command -v python)" \
      && apt-get purge -y --auto-remove build-essential cmake \
      && rm -rf /var/lib/apt/lists/*; \
    fi

RUN groupadd --gid 10001 gear \
    && useradd --create-home --uid 10001 --gid 10001 --shell /usr/sbin/nologin gear \
    && mkdir -p /app/data \
    && chown -R 10001:10001 /app/data
USER 10001:10001

EXPOSE 8501
VOLUME ["/app/data"]

# python-slim has no curl: probe Streamlit's health endpoint with the standard library
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; r = urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4); sys.exit(0 if r.status == 200 else 1)"]

CMD ["streamlit", "run", "app.py", "--server.address", "0.0.0.0", "--server.headless", "true", "--browser.gatherUsageStats", "false"]
