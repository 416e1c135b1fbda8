/// <reference lib="dom" />
/**
 * The header: the site, the current visitors (the last 5 minutes, a link to
 * the live view), the date picker with its presets and a custom range, the
 * comparison toggle (previous period, a year earlier, custom days, or off),
 * and sign out. Under a share link there is no key to sign out of: a link
 * with a password may forget it, and a "copy link" control shares the page;
 * the embedded page (?embed=true) has neither.
 */
import { useState } from "preact/hooks";

import { formatDays, formatNumber } from "./format.ts";
import { currentVisitorsQuery } from "./queries.ts";
import {
  canCompare,
  type CompareChoice,
  isDay,
  type Preset,
  PRESETS,
  type Range,
  type View,
} from "./state.ts";
import { useLoad, useStore } from "./store.ts";

export const PRESET_LABELS: Record<Preset, string> = {
  realtime: "Realtime",
  today: "Today",
  yesterday: "Yesterday",
  "7d": "Last 7 days",
  "30d": "Last 30 days",
  month: "This month",
  year: "This year",
  all: "All time",
};

const COMPARE_LABELS: Record<string, string> = {
  previous_period: "Previous period",
  year_over_year: "A year earlier",
  off: "Off",
  custom: "Custom days…",
};

/** Two date inputs and an Apply button, for a custom range or comparison. */
function DaysForm(
  props: { label: string; initial?: [string, string]; onApply: (days: [string, string]) => void },
) {
  const [first, setFirst] = useState(props.initial?.[0] ?? "");
  const [last, setLast] = useState(props.initial?.[1] ?? "");
  const valid = isDay(first) && isDay(last) && first <= last;
  return (
    <form
      class="days"
      aria-label={props.label}
      onSubmit={(event) => {
        event.preventDefault();
        if (valid) props.onApply([first, last]);
      }}
    >
      <label>
        From{" "}
        <input
          type="date"
          value={first}
          required
          onInput={(e) => setFirst(e.currentTarget.value)}
        />
      </label>
      <label>
        to{" "}
        <input type="date" value={last} required onInput={(e) => setLast(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={!valid}>Apply</button>
    </form>
  );
}

export function DatePicker({ current }: { current: View }) {
  const { update } = useStore();
  const custom = Array.isArray(current.range);
  const [editing, setEditing] = useState(false);
  return (
    <div class="picker">
      <label>
        <span class="visually-hidden">Date range</span>
        <select
          data-testid="range"
          value={custom ? "custom" : current.range as string}
          onChange={(e) => {
            const value = e.currentTarget.value;
            if (value === "custom") return setEditing(true);
            setEditing(false);
            update((v) => ({ ...v, range: value as Range, interval: undefined }));
          }}
        >
          {PRESETS.map((p) => <option value={p} key={p}>{PRESET_LABELS[p]}</option>)}
          <option value="custom">
            {custom ? formatDays(...current.range as [string, string]) : "Custom range…"}
          </option>
        </select>
      </label>
      {(editing || custom) && (
        <DaysForm
          label="Custom date range"
          initial={custom ? current.range as [string, string] : undefined}
          onApply={(days) => {
            setEditing(false);
            update((v) => ({ ...v, range: days, interval: undefined }));
          }}
        />
      )}
    </div>
  );
}

export function ComparePicker({ current }: { current: View }) {
  const { update } = useStore();
  const custom = Array.isArray(current.compare);
  const [editing, setEditing] = useState(false);
  const enabled = canCompare(current.range);
  return (
    <div class="picker">
      <label>
        Compare{" "}
        <select
          data-testid="compare"
          disabled={!enabled}
          value={!enabled ? "off" : custom ? "custom" : current.compare as string}
          onChange={(e) => {
            const value = e.currentTarget.value;
            if (value === "custom") return setEditing(true);
            setEditing(false);
            update((v) => ({ ...v, compare: value as CompareChoice }));
          }}
        >
          {Object.entries(COMPARE_LABELS).map(([value, label]) => (
            <option value={value} key={value}>
              {value === "custom" && custom
                ? formatDays(...current.compare as [string, string])
                : label}
            </option>
          ))}
        </select>
      </label>
      {enabled && (editing || custom) && (
        <DaysForm
          label="Compared days"
          initial={custom ? current.compare as [string, string] : undefined}
          onApply={(days) => {
            setEditing(false);
            update((v) => ({ ...v, compare: days }));
          }}
        />
      )}
    </div>
  );
}

/** Visitors of the last 5 minutes, refreshed with the live tick; a link to the live view. */
export function CurrentVisitors() {
  const { update, keyOf, tick, api } = useStore();
  const body = currentVisitorsQuery();
  tick.value; // refreshed on every tick, in every view
  const loaded = useLoad(keyOf(body, true), () => api.query(body));
  const count = loaded.data?.results[0]?.metrics[0];
  return (
    <a
      class="current"
      href="?range=realtime"
      data-testid="current-visitors"
      onClick={(event) => {
        event.preventDefault();
        update((v) => ({ ...v, range: "realtime", interval: undefined }));
      }}
    >
      <span class="dot" aria-hidden="true" />
      <strong>{typeof count === "number" ? formatNumber(count) : "–"}</strong>{" "}
      current visitor{count === 1 ? "" : "s"}
    </a>
  );
}

/** Copies the shared page's address (without embed=true) for the reader to pass on. */
function CopyLink() {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="quiet"
      data-testid="copy-link"
      onClick={async () => {
        const url = new URL(location.href);
        url.searchParams.delete("embed");
        await navigator.clipboard?.writeText(url.href);
        setCopied(true);
      }}
    >
      {copied ? "Link copied" : "Copy link"}
    </button>
  );
}

export function Header() {
  const { view, site, signOut, share } = useStore();
  const current = view.value;
  const info = site.value;
  const signOutShown = !share || (!share.embed && share.passwordRequired);
  return (
    <header class="top">
      <div class="brand">
        <h1>Reports</h1>
        {info && (
          <span class="site" data-testid="site">
            {info.siteId}
            {info.timeZone ? ` · ${info.timeZone}` : ""}
          </span>
        )}
        <CurrentVisitors />
      </div>
      <div class="controls">
        <DatePicker current={current} />
        <ComparePicker current={current} />
        {share && !share.embed && <CopyLink />}
        {signOutShown && (
          <button
            type="button"
            class="quiet"
            onClick={() => signOut()}
            data-testid="signout"
          >
            Sign out
          </button>
        )}
      </div>
    </header>
  );
}
