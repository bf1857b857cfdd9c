import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Built into web/dist, which baid serves at the API's own address.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', chunkSizeWarningLimit: 2000 },
  test: { environment: 'node', include: ['src/**/*.test.ts'] },
} as never);
