// The route imports `merchant-webhooks/next`, which tsconfig.json maps to this repository's sources (a
// merchant's app gets the built package from node_modules instead). Those sources sit outside this app
// and import each other with `.js` specifiers, as Node's ESM resolution wants; webpack is told both.
// Run with `npx next dev --webpack examples/next` (Turbopack cannot map `.js` to `.ts` yet).

/** @type {import("next").NextConfig} */
const nextConfig = {
  experimental: {
    externalDir: true,
    extensionAlias: { ".js": [".ts", ".js"] },
  },
};

export default nextConfig;
