# syntax=docker/dockerfile:1
# kafka-config-operator: a static musl binary on distroless/static, running as 65532 (nonroot).
#   docker build -t kafka-config-operator:dev .
# The build stage runs the same command as e2e/chart/image-build-check.sh.

FROM rust:1-bookworm AS build
# musl-tools: ring (rustls' crypto) and jemalloc (the allocator on musl) compile C with musl-gcc
# for the musl target; the rust image already has make. Not pinned:
# bookworm's musl-tools only takes security fixes, and the builder image tag already fixes the suite.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends musl-tools \
 && rm -rf /var/lib/apt/lists/* \
 && rustup target add x86_64-unknown-linux-musl
WORKDIR /src
# .dockerignore lets in only what the build reads: manifests, src/, the bench the manifest names,
# and the files src/ embeds with include_str! (catalogue, CRDs).
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --target x86_64-unknown-linux-musl \
 && install -D -m 0755 target/x86_64-unknown-linux-musl/release/kafka-config-operator /out/kafka-config-operator

FROM gcr.io/distroless/static-debian12:nonroot
LABEL org.opencontainers.image.title="kafka-config-operator" \
      org.opencontainers.image.description="Renders layered Kafka client and tool configuration into ConfigMaps and Secrets" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /out/kafka-config-operator /kafka-config-operator
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/kafka-config-operator", "run"]
