import { defineConfig } from "vite";

// `npm run dev` proxies the API to a running ticksentry (TICKSENTRY_URL, default :8080);
// `npm run build` writes dist/, which ticksentry serves itself.
export default defineConfig({
  base: "./",
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 1000 },
  server: {
    proxy: {
      "/api": process.env.TICKSENTRY_URL ?? "http://127.0.0.1:8080",
      "/metrics": process.env.TICKSENTRY_URL ?? "http://127.0.0.1:8080",
    },
  },
});
