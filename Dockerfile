# railyard as a container image: the Grid API sandbox for suites in any language
# (docs/container.md). Build: `docker build -t railyard .` (or `podman build --format docker`).
#
# Three stages on the same Node base: `deps` installs the production dependencies and compiles
# the SQLite driver (better-sqlite3 12, a native addon) for this Node; `build` bundles the
# server with esbuild (scripts/build.mjs); the runtime copies both into a fresh base and runs
# as the unprivileged `node` user. The base's Node is the one the addon is compiled for, so
# all three name the same image.
#
# CI builds this file unchanged on a machine that reaches no image registry: it makes the base
# image itself, from Debian's packages and Node's npm package, under this exact name
# (scripts/container-check.sh). Change the name there too.

FROM node:22-bookworm-slim AS deps
# node-gyp's tools, for the driver's compile. The compile uses the headers the base ships
# (npm_config_nodedir), never a download, and builds from source rather than fetching a
# prebuilt binary: the addon is made for exactly this Node, with no other network than the
# npm registry.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local \
    npm_config_build_from_source=true \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
WORKDIR /app
COPY package.json package-lock.json ./
# Without the dev dependencies, and without the optional better-sqlite3 13 (Node-API), which
# only Node 24.19 and later use (src/db/sqlite-driver.ts); Node 22 loads 12. Install scripts
# off (the project's own `prepare` would bundle, which needs the dev dependencies), then the
# driver's alone; what the compile leaves beside the addon goes.
RUN npm ci --omit=dev --omit=optional --ignore-scripts \
 && npm rebuild better-sqlite3 \
 && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
           node_modules/better-sqlite3/build/Release/obj node_modules/better-sqlite3/build/Release/.deps \
           node_modules/better-sqlite3/build/Release/test_extension.node

FROM node:22-bookworm-slim AS build
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
WORKDIR /app
COPY package.json package-lock.json ./
# Every dependency (esbuild, Preact for the dashboard), no install scripts: nothing native is
# needed to bundle.
RUN npm ci --ignore-scripts
COPY tsconfig.json ./
COPY scripts/build.mjs scripts/
COPY src src
COPY dashboard dashboard
RUN node scripts/build.mjs

FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist/main.js /app/dist/index.js /app/dist/send-worker.js /app/dist/checkpoint-worker.js \
  /app/dist/journal-worker.js dist/
COPY --from=build /app/dist/dashboard dist/dashboard
# The shared chunk's name carries a hash: a glob takes it.
COPY --from=build /app/dist/chunk-*.js dist/
COPY package.json ./
COPY bin bin
# `railyard` on the PATH, for `docker exec <container> railyard seed` and the other commands,
# which find the running server through /data/server.json.
RUN ln -s /app/bin/railyard.js /usr/local/bin/railyard \
 && mkdir -p /data \
 && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
# Node itself checks: the slim base has no curl or wget.
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT||8080}/health`).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM (docker stop) drains in-flight requests and jobs, closes the store and exits 0.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js", "start"]
