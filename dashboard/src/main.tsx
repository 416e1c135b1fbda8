/// <reference lib="dom" />
/**
 * The reports page (GET /dashboard/, and GET /share/ID read-only), built into
 * dashboard/dist/dashboard.js:
 * Preact components over the signals of one store (store.ts), made here and
 * passed down by context; uPlot for the chart. The key stays in this tab's
 * session storage; the view lives in the URL.
 */
import { render } from "preact";
import { App } from "./app.tsx";
import { browserEnv, startListening } from "./browser.ts";
import { createStore, StoreContext } from "./store.ts";

const store = createStore(browserEnv());
startListening(store);
const root = document.getElementById("root")!;
// The shared page's password form drawn by the gateway gives way to the script's.
root.replaceChildren();
render(
  <StoreContext.Provider value={store}>
    <App />
  </StoreContext.Provider>,
  root,
);
