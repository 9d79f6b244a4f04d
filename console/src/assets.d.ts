// esbuild bundles imported style sheets into the CSS file next to the script.
declare module '*.css';
