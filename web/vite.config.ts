// Vite config for the HeteroFlow console. The build lands in web/dist, which
// web/embed.go embeds into the Go binary; dist/.keep must survive the build
// because go:embed needs at least one file there even before the first build.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

const outDir = resolve(import.meta.dirname, 'dist');

// keepFile re-creates dist/.keep after Vite empties the output folder.
function keepFile(): Plugin {
  return {
    name: 'heteroflow-keep-dist',
    apply: 'build',
    closeBundle() {
      writeFileSync(resolve(outDir, '.keep'), '');
    },
  };
}

// precompress writes a .gz and a .br twin of every compressible file the
// build emits (Node's own zlib: no extra dependency); the server sends the
// one the browser accepts (controlplane/server/console.go).
function precompress(): Plugin {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const p = join(dir, n);
      return statSync(p).isDirectory() ? walk(p) : [p];
    });
  return {
    name: 'heteroflow-precompress',
    apply: 'build',
    closeBundle() {
      for (const file of walk(outDir)) {
        if (!/\.(js|mjs|css|html|svg|json|txt|map)$/.test(file)) continue;
        const data = readFileSync(file);
        if (data.length < 1024) continue;
        writeFileSync(`${file}.gz`, gzipSync(data, { level: 9 }));
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(data, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: data.length } }),
        );
      }
    },
  };
}

// The dev server forwards API calls to a locally running `heteroflow server`
// (API listener :3333 by default; override with HETEROFLOW_API).
const api = process.env.HETEROFLOW_API ?? 'http://127.0.0.1:3333';

export default defineConfig({
  plugins: [react(), keepFile(), precompress()],
  build: {
    outDir,
    emptyOutDir: true,
    // antd alone is ~1 MB minified; split vendors so app changes keep them cached.
    chunkSizeWarningLimit: 1200,
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            { name: 'react', test: /[\\/]node_modules[\\/](react|react-dom|scheduler|react-router|react-router-dom)[\\/]/, priority: 30 },
            { name: 'echarts', test: /[\\/]node_modules[\\/](echarts|zrender)[\\/]/, priority: 20 },
            { name: 'antd', test: /[\\/]node_modules[\\/](antd|@ant-design|@rc-component|rc-[^\\/]+)[\\/]/, priority: 10 },
            { name: 'vendor', test: /[\\/]node_modules[\\/]/, priority: 0 },
          ],
        },
      },
    },
  },
  server: {
    port: 5174,
    proxy: {
      '/api': api,
      '/health': api,
      '/prometheus': api,
    },
  },
});
