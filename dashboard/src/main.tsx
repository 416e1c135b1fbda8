/// <reference lib="dom" />
/**
 * The reports page (GET /dashboard/), built into dashboard/dist/dashboard.js:
 * Preact components over signals (store.ts), uPlot for the chart. The key
 * stays in this tab's session storage; the view lives in the URL.
 */
import { render } from "preact";
import { App } from "./app.tsx";
import { startListening } from "./store.ts";

startListening();
render(<App />, document.getElementById("root")!);
