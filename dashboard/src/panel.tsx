/// <reference lib="dom" />
/**
 * The panels side by side (Sources, Pages, Locations, Devices, Events, Ad
 * links): each a short list of its chosen tab with a "more" view that lists
 * up to 100 rows with every metric, the change against the compared range,
 * a search and a CSV download. The Events panel adds each event's
 * conversion rate, and breaks one event down by a declared property.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { type Answer, type QueryBody, type ResultRow, type SiteInfo } from "./api.ts";
import { csvOf, formatMetric, METRIC_LABELS, valueLabel } from "./format.ts";
import { type PanelDef, panelOf, PANELS, type Tab, tabOf } from "./panels.ts";
import { conversionQuery, listQuery, tabDimension } from "./queries.ts";
import { compareOf, type MetricName, type View, withFilter } from "./state.ts";
import { type Store, useLoad, useStore } from "./store.ts";
import { changeColumn, type Column, TopList } from "./toplist.tsx";

function metricColumns(metrics: MetricName[]): Column[] {
  return metrics.map((metric, i) => ({
    label: METRIC_LABELS[metric],
    text: (row: ResultRow) => formatMetric(metric, row.metrics[i]),
  }));
}

/** Each listed event's conversion rate among the view's visitors, by event name. */
function useConversions(rows: ResultRow[] | undefined, current: View) {
  const { keyOf, api } = useStore();
  const names = (rows ?? []).map((r) => r.dimensions[0]).filter((n): n is string => n !== null);
  const bodies = names.map((name) => conversionQuery(current, name));
  const loaded = useLoad(
    names.length ? keyOf(bodies) : undefined,
    () => Promise.all(bodies.map((b) => api.query(b))),
  );
  const rates = new Map<string, number>();
  loaded.data?.forEach((answer, i) => {
    const rate = answer.results[0]?.metrics[0];
    if (typeof rate === "number") rates.set(names[i], rate);
  });
  return rates;
}

function conversionColumn(rates: Map<string, number>): Column {
  return {
    label: "Conversion",
    text: (row) => {
      const rate = rates.get(row.dimensions[0] ?? "");
      return rate === undefined ? "…" : formatMetric("conversion_rate", rate);
    },
  };
}

/** Event types with declared parameters, for the properties tab. */
function typesWithParams(info: SiteInfo | undefined) {
  return (info?.eventTypes ?? []).filter((t) => t.params.length > 0);
}

/** The event and property whose values the properties tab lists. */
function PropertyChoice({ current }: { current: View }) {
  const { site, update } = useStore();
  const types = typesWithParams(site.value);
  const type = types.find((t) => t.name === current.event);
  if (types.length === 0) return <p class="empty">No event type declares properties.</p>;
  return (
    <div class="choice">
      <label>
        Event{" "}
        <select
          data-testid="props-event"
          value={current.event ?? ""}
          onChange={(e) => {
            const name = e.currentTarget.value;
            const chosen = types.find((t) => t.name === name);
            update((v) => ({ ...v, event: name || undefined, property: chosen?.params[0]?.key }));
          }}
        >
          <option value="">Choose an event…</option>
          {types.map((t) => <option key={t.name} value={t.name}>{t.title || t.name}</option>)}
        </select>
      </label>
      {type && (
        <label>
          Property{" "}
          <select
            data-testid="props-key"
            value={current.property ?? ""}
            onChange={(e) => {
              const property = e.currentTarget.value;
              update((v) => ({ ...v, property }));
            }}
          >
            {type.params.map((p) => <option key={p.key} value={p.key}>{p.key}</option>)}
          </select>
        </label>
      )}
    </div>
  );
}

function Tabs(props: { panel: PanelDef; tab: Tab }) {
  const { update } = useStore();
  const { panel, tab } = props;
  if (panel.tabs.length < 2) return null;
  const choose = (id: string) =>
    update((v) => ({
      ...v,
      tabs: { ...v.tabs, [panel.id]: id === panel.tabs[0].id ? undefined : id },
    }));
  const grouped = panel.tabs.filter((t) => t.group);
  const group = grouped[0]?.group;
  return (
    <div class="segmented tabs" role="group" aria-label={`${panel.title}: list`}>
      {panel.tabs.filter((t) => !t.group).map((t) => (
        <button
          type="button"
          key={t.id}
          aria-pressed={t.id === tab.id}
          data-tab={t.id}
          onClick={() => choose(t.id)}
        >
          {t.label}
        </button>
      ))}
      {group && (
        <select
          aria-label={group}
          data-tab-group={group}
          class={tab.group ? "chosen" : ""}
          value={tab.group ? tab.id : ""}
          onChange={(e) => e.currentTarget.value && choose(e.currentTarget.value)}
        >
          <option value="">{group}…</option>
          {grouped.map((t) => <option key={t.id} value={t.id}>{t.label}</option>)}
        </select>
      )}
    </div>
  );
}

/** The columns of a list: its metrics, conversion rates for events, and changes when full. */
function columnsOf(
  tab: Tab,
  metrics: MetricName[],
  answer: Answer | undefined,
  rates: Map<string, number>,
  current: View,
): Column[] {
  const columns = metricColumns(metrics);
  if (tab.dimension === "event:name") columns.splice(2, 0, conversionColumn(rates));
  if (compareOf(current) && answer?.results.some((r) => r.comparison !== undefined)) {
    columns.splice(1, 0, changeColumn(metrics[0], 0));
  }
  return columns;
}

function pick(update: Store["update"], dimension: string) {
  return (value: string) => update((v) => withFilter(v, ["is", dimension, [value]]));
}

export function Panel({ def }: { def: PanelDef }) {
  const { view, update, keyOf, api } = useStore();
  const current = view.value;
  const tab = tabOf(def, current.tabs[def.id]);
  const body = listQuery(tab, current, false);
  const loaded = useLoad(keyOf(body), () => api.query(body!));
  const rates = useConversions(
    tab.dimension === "event:name" ? loaded.data?.results : undefined,
    current,
  );
  const dimension = tabDimension(tab, current);
  return (
    <section
      class="panel"
      aria-labelledby={`panel-${def.id}`}
      data-panel={def.id}
      data-tab={tab.id}
      aria-busy={loaded.loading}
    >
      <div class="panel-head">
        <h2 id={`panel-${def.id}`}>{def.title}</h2>
        <Tabs panel={def} tab={tab} />
      </div>
      {tab.dimension === "event:props" && <PropertyChoice current={current} />}
      {loaded.error && <p class="error" role="alert">{loaded.error}</p>}
      {dimension && loaded.data && (
        <TopList
          dimension={dimension}
          name={tab.dimension === "event:props" ? current.property ?? tab.name : tab.name}
          none={tab.dimension === "event:props" ? "(not set)" : tab.none}
          rows={loaded.data.results}
          columns={columnsOf(tab, body!.metrics, loaded.data, rates, current)}
          onPick={pick(update, dimension)}
        />
      )}
      {dimension && loaded.data && loaded.data.meta.totalRows > 0 && (
        <button
          type="button"
          class="more quiet"
          data-testid="more"
          onClick={() => update((v) => ({ ...v, more: def.id }))}
        >
          More<span class="visually-hidden">{` ${tab.label} (${def.title})`}</span>
        </button>
      )}
    </section>
  );
}

export function Panels() {
  return (
    <div class="panels">
      {PANELS.map((def) => <Panel key={def.id} def={def} />)}
    </div>
  );
}

function download(name: string, tab: Tab, dimension: string, answer: Answer, columns: Column[]) {
  const rows = answer.results.map((row, i) => [
    valueLabel(dimension, row.dimensions[0], tab.none ?? "(none)"),
    ...columns.map((c) => c.text(row, i)),
  ]);
  const blob = new Blob([csvOf([tab.name, ...columns.map((c) => c.label)], rows)], {
    type: "text/csv",
  });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = `${name}.csv`;
  link.click();
  URL.revokeObjectURL(link.href);
}

/** The full list of the panel the view names in `more`, in a modal dialog. */
export function MoreDialog() {
  const { view, update, keyOf, api } = useStore();
  const ref = useRef<HTMLDialogElement>(null);
  const current = view.value;
  const def = panelOf(current.more!);
  const tab = tabOf(def, current.tabs[def.id]);
  const dimension = tabDimension(tab, current);
  const [search, setSearch] = useState("");
  const listed = listQuery(tab, current, true);
  const body: QueryBody | undefined = listed && search.trim()
    ? {
      ...listed,
      filters: [...(listed.filters ?? []), ["contains", dimension, [search.trim()]]],
    }
    : listed;
  const loaded = useLoad(keyOf(body), () => api.query(body!));
  const rates = useConversions(
    tab.dimension === "event:name" ? loaded.data?.results : undefined,
    current,
  );
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const columns = loaded.data ? columnsOf(tab, body!.metrics, loaded.data, rates, current) : [];
  const title = `${def.title}: ${tab.label}`;
  return (
    <dialog
      ref={ref}
      class="dialog wide"
      aria-labelledby="more-title"
      data-testid="more-dialog"
      onClose={() => update((v) => ({ ...v, more: undefined }))}
    >
      <div class="dialog-head">
        <h2 id="more-title">{title}</h2>
        <button type="button" class="quiet" onClick={() => ref.current?.close()}>Close</button>
      </div>
      <div class="dialog-tools">
        <label>
          Search{" "}
          <input
            type="search"
            data-testid="more-search"
            value={search}
            onInput={(e) => setSearch(e.currentTarget.value)}
          />
        </label>
        {loaded.data && dimension && (
          <button
            type="button"
            data-testid="csv"
            onClick={() => download(title, tab, dimension, loaded.data!, columns)}
          >
            Download CSV
          </button>
        )}
      </div>
      {loaded.error && <p class="error" role="alert">{loaded.error}</p>}
      {dimension && loaded.data && (
        <TopList
          dimension={dimension}
          name={tab.name}
          none={tab.none}
          rows={loaded.data.results}
          columns={columns}
          onPick={pick(update, dimension)}
          testid="more-list"
        />
      )}
    </dialog>
  );
}
