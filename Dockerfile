# The image examples/deploy/berth-scheduler.yaml runs (berth:latest):
#   docker build -t berth:latest .
# Berth installed with pip from this repository; the entry point is the `berth` command, run as a non-root
# user (numeric, so that a pod's `runAsNonRoot: true` can be checked by the kubelet).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /build
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install . && rm -rf /build

RUN useradd --system --uid 10001 --user-group --no-create-home --home-dir /nonexistent berth
USER 10001:10001
WORKDIR /

# kube-scheduler's secure port: /metrics and /healthz over HTTPS (berth run --metrics-listen)
EXPOSE 10259
ENTRYPOINT ["berth"]
CMD ["run", "--help"]
