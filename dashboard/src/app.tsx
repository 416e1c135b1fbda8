/// <reference lib="dom" />
/**
 * The page: sign in, or the dashboard of the view in the URL: the header,
 * the filters, the top cards, the chart, the panels side by side and the
 * funnel; in the live view (range "realtime") the same over the last 30
 * minutes by minute, refreshed without reloading.
 */
import { useEffect, useState } from "preact/hooks";
import { REPORT_KEY } from "./api.ts";
import { Cards } from "./cards.tsx";
import { Chart } from "./chart.tsx";
import { FilterBar } from "./filters.tsx";
import { formatDays } from "./format.ts";
import { Funnel } from "./funnel.tsx";
import { Header } from "./header.tsx";
import { MoreDialog, Panels } from "./panel.tsx";
import { cardMetrics, chartQuery, comparedChartQuery, summaryQuery } from "./queries.ts";
import { seriesOf } from "./series.ts";
import {
  compareOf,
  daysBetween,
  daysOf,
  intervalOf,
  intervalsFor,
  isRealtime,
  type MetricName,
  type View,
} from "./state.ts";
import { useLoad, useStore } from "./store.ts";

function SignIn() {
  const { signIn, signInMessage } = useStore();
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  return (
    <main class="signin" id="signin">
      <h1>Reports</h1>
      <form
        id="signin-form"
        autocomplete="off"
        onSubmit={async (event) => {
          event.preventDefault();
          const value = key.trim();
          if (!REPORT_KEY.test(value)) {
            signInMessage.value = "A report key is rk_ followed by 48 hex characters.";
            return;
          }
          setBusy(true);
          await signIn(value);
          setBusy(false);
          setKey("");
        }}
      >
        <label for="key">Report key</label>
        <input
          id="key"
          name="key"
          type="password"
          placeholder="rk_..."
          required
          spellcheck={false}
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
      <p id="signin-error" role="alert">{signInMessage.value}</p>
      <p>The key stays in this tab until you sign out or close it; it is never put in a link.</p>
    </main>
  );
}

/** A share link's password form (GET /share/ID of a link with a password). */
function SharePassword() {
  const { signIn, signInMessage } = useStore();
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  return (
    <main class="signin" id="share-password">
      <h1>Reports</h1>
      <form
        id="share-password-form"
        autocomplete="off"
        onSubmit={async (event) => {
          event.preventDefault();
          if (password === "") return;
          setBusy(true);
          await signIn(password);
          setBusy(false);
          setPassword("");
        }}
      >
        <label for="share-password-input">Password</label>
        <input
          id="share-password-input"
          name="password"
          type="password"
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>Show the reports</button>
      </form>
      <p id="signin-error" role="alert">{signInMessage.value}</p>
      <p>This shared dashboard asks for a password.</p>
    </main>
  );
}

/** A share link that no longer works (revoked, expired or unknown). */
function LinkGone() {
  return (
    <main class="signin" id="share-gone">
      <h1>This link no longer works</h1>
      <p>
        The shared dashboard it pointed to was revoked, has expired or never existed. Ask whoever
        sent it for a new link.
      </p>
    </main>
  );
}

function comparedWords(current: View): string | undefined {
  const compare = compareOf(current);
  if (compare === undefined) return undefined;
  if (compare === "previous_period") return "previous period";
  if (compare === "year_over_year") return "a year earlier";
  return formatDays(compare[0], compare[1]);
}

function Overview() {
  const { view, site, update, keyOf, refreshedAt, api } = useStore();
  const current = view.value;
  const metrics = cardMetrics(site.value, current);
  const summaryBody = summaryQuery(current, metrics);
  const summary = useLoad(keyOf(summaryBody), () => api.query(summaryBody));
  const meta = summary.data?.meta;
  const days = meta ? daysBetween(meta.dateRange[0], meta.dateRange[1]) : daysOf(current.range);
  const interval = intervalOf(current, days);
  const comparedDays: [string, string] | undefined =
    compareOf(current) && meta?.compareDateRange && !isRealtime(current)
      ? [meta.compareDateRange[0], meta.compareDateRange[1]]
      : undefined;
  const chartBody = meta ? chartQuery(current, interval) : undefined;
  const comparedBody = chartBody && comparedDays
    ? comparedChartQuery(current, interval, comparedDays)
    : undefined;
  const chart = useLoad(
    keyOf(chartBody && [chartBody, comparedBody]),
    () =>
      Promise.all([
        api.query(chartBody!),
        comparedBody ? api.query(comparedBody) : Promise.resolve(undefined),
      ]),
  );
  const realtime = isRealtime(current);
  const period = meta
    ? realtime ? "Last 30 minutes" : formatDays(meta.dateRange[0], meta.dateRange[1])
    : "";
  const comparedPeriod = meta?.compareDateRange
    ? realtime
      ? "the 30 minutes before"
      : formatDays(meta.compareDateRange[0], meta.compareDateRange[1])
    : undefined;
  return (
    <>
      {realtime && (
        <p class="live" role="status" data-testid="live">
          Live: the last 30 minutes, updated{" "}
          {new Date(refreshedAt.value).toLocaleTimeString("en-GB")}
        </p>
      )}
      {summary.error && <p class="error" role="alert">Could not load the report: {summary.error}
      </p>}
      <Cards
        metrics={metrics}
        row={summary.data?.results[0]}
        compared={comparedWords(current)}
        selected={current.metric}
        onSelect={(metric) => update((v) => ({ ...v, metric }))}
      />
      {chart.data && (
        <Chart
          series={seriesOf(chart.data[0], chart.data[1])}
          // The answer echoes the metric it was asked for, one of the API's names.
          metric={(chart.data[0].query?.metrics[0] as MetricName | null | undefined) ??
            current.metric}
          interval={interval}
          intervals={intervalsFor(current.range, days)}
          onInterval={(i) => update((v) => ({ ...v, interval: i }))}
          period={period}
          comparedPeriod={chart.data[1] ? comparedPeriod : undefined}
        />
      )}
      <Panels />
      {!realtime && <Funnel />}
    </>
  );
}

function Dashboard() {
  const { view, site, refused, pending, api, share } = useStore();
  useEffect(() => {
    if (!site.value) {
      api.site().then((info) => (site.value = info)).catch((error) =>
        refused(error, "That report key is not valid (any more).")
      );
    }
  }, []);
  return (
    <div
      id="app"
      aria-busy={pending.value > 0}
      class={share ? (share.embed ? "shared embedded" : "shared") : undefined}
    >
      <Header />
      <main class="content">
        <FilterBar />
        {site.value ? <Overview /> : <p role="status">Loading…</p>}
      </main>
      {site.value && view.value.more && <MoreDialog key={view.value.more} />}
    </div>
  );
}

export function App() {
  const { signedIn, share, linkGone } = useStore();
  if (share && linkGone.value) return <LinkGone />;
  if (signedIn.value) return <Dashboard />;
  return share ? <SharePassword /> : <SignIn />;
}
