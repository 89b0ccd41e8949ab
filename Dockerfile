# A small faultline image on Debian 12, from Debian packages only. The build stage compiles faultline
# (only what building it needs: install-deps.sh --build-only) and packs it as a .deb (cpack); the
# runtime stage installs that .deb on debian:12-slim, so apt brings exactly the shared libraries it
# needs and nothing of the toolchain. Used as WireMock's and Toxiproxy's images are:
#   docker run --rm -p 8080:8080 -p 8081:8081 -e FAULTLINE_CONTROL_TOKEN=s3cret faultline:0.1.0
#       serves on :8080 with the control API on :8081 (add rules at runtime, or mount a rules file
#       and append `--rules /work/rules.toml`); the journal goes to /reports
#   docker run --rm -v "$PWD:/work" faultline:0.1.0 run --report-dir /reports scenarios/
#   scripts/docker-build.sh builds it and runs a suite inside; scripts/dockerfile-check.sh lints this file
FROM debian:12 AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && scripts/install-deps.sh --build-only && rm -rf /var/lib/apt/lists/*
COPY . .
RUN rm -rf build \
    && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
             -DFAULTLINE_BUILD_TESTS=OFF -DFAULTLINE_BUILD_BENCH=OFF \
    && cmake --build build -j"$(nproc)" \
    && (cd build && cpack -G DEB) \
    && cp build/packages/faultline_*.deb /faultline.deb

FROM debian:12-slim
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="faultline" \
      org.opencontainers.image.description="chaos / fault-injection harness for HTTP retry behaviour" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /faultline.deb /tmp/faultline.deb
# curl: command clients (`[client] driver = "command"`) and the health check.
RUN apt-get update && apt-get install -y --no-install-recommends /tmp/faultline.deb curl \
    && rm -rf /var/lib/apt/lists/* /tmp/faultline.deb \
    && useradd --system --uid 10001 --create-home --home-dir /work faultline \
    && install -d -o faultline -g faultline /reports /run/faultline
USER faultline
WORKDIR /work
VOLUME ["/reports"]
EXPOSE 8080 8081
# Healthy once serve (or proxy) listens: the ready file is written atomically then, and removed at exit.
HEALTHCHECK --interval=5s --timeout=2s --start-period=5s CMD test -s /run/faultline/ready.json
ENTRYPOINT ["faultline"]
# In a container the ports must face the host (-p); beyond loopback the control API needs a token:
# FAULTLINE_CONTROL_TOKEN, or the random one serve prints.
CMD ["serve", "--listen", "0.0.0.0:8080", "--control-listen", "0.0.0.0:8081", "--allow-non-loopback", "--ready-file", "/run/faultline/ready.json", "--journal", "/reports/journal.jsonl"]
