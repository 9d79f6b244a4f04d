# Gateway and worker image: one image, the command picks the process
# (node --max-semi-space-size=64 --min-semi-space-size=64 dist/gateway/main.js | node dist/worker/main.js |
#  node --max-semi-space-size=64 --min-semi-space-size=64 dist/main.js for the embedded mode; the flags: docs/running.md §Operating it).
#
# Node.js: the version of .node-version (the one CI runs), on Debian 12 (glibc 2.36), as CI's
# machines; test/unit/repository/runtime.unit.test.ts holds both stages to .node-version.
FROM node:24.22.3-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc .node-version ./
# npm install runs scripts/runtime/: the Node.js check before it, and after it the step that makes
# uWebSockets.js load on glibc 2.36 (docs/dependencies.md §uWebSockets.js on Debian 12). Nothing
# compiles: every native dependency ships prebuilt on the npm registry.
COPY scripts/runtime ./scripts/runtime
# npm install with the lockfile, not npm ci: chdb (a devDependency) names platform packages the
# registry does not serve, which npm ci refuses (.ci/run says more).
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json main.ts ./
COPY shared ./shared
COPY gateway ./gateway
COPY worker ./worker
COPY cli ./cli
COPY console ./console
RUN npm run build && npm prune --omit=dev

FROM node:24.22.3-bookworm-slim
ENV NODE_ENV=production
# Allocations of 4 MB and more are mapped and unmapped by themselves, not kept by glibc in a thread's
# arena (scrypt's 16 MB work area in each libuv thread: docs/running.md §Memory); npm start sets the same.
ENV GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4194304
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8080 8081
# The young generation size the gateway is tuned for (docs/running.md §Operating it); the same flags as `npm start`.
CMD ["node", "--max-semi-space-size=64", "--min-semi-space-size=64", "dist/main.js"]
