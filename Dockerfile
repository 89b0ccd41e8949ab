# A small faultline image on Debian 12, from Debian packages only. The build stage compiles faultline
# and packs it as a .deb (cpack); the runtime stage installs that .deb on debian:12-slim, so apt
# brings exactly the shared libraries it needs and nothing of the toolchain.
#   scripts/docker-build.sh            builds it and runs a suite inside
#   docker run --rm -v "$PWD:/work" -w /work faultline run suites/
FROM debian:12 AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/
# file and dpkg-dev (dpkg-shlibdeps): cpack derives the .deb's Depends from the binary with them.
RUN apt-get update && apt-get install -y --no-install-recommends help2man ca-certificates file dpkg-dev \
    && scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN rm -rf build \
    && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
             -DFAULTLINE_BUILD_TESTS=OFF -DFAULTLINE_BUILD_BENCH=OFF \
    && cmake --build build -j"$(nproc)" \
    && (cd build && cpack -G DEB) \
    && cp build/packages/faultline_*.deb /faultline.deb

FROM debian:12-slim
COPY --from=build /faultline.deb /tmp/faultline.deb
RUN apt-get update && apt-get install -y --no-install-recommends /tmp/faultline.deb \
    && rm -rf /var/lib/apt/lists/* /tmp/faultline.deb
# faultline refuses non-loopback addresses: everything it serves stays inside the container.
ENTRYPOINT ["faultline"]
CMD ["--help"]
