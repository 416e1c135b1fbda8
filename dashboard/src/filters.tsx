/// <reference lib="dom" />
/**
 * The filters: one removable chip each, and a small dialog for the filters
 * a click on a row cannot make (is not, contains, does not contain; any
 * dimension, an event's declared properties included), with the range's
 * values of the chosen dimension as suggestions; and the site's segments,
 * to apply, save from the current filters, rename or delete.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { type SiteInfo } from "./api.ts";
import { FilterChips } from "./chips.tsx";
import { FILTER_DIMENSIONS, OPERATOR_LABELS } from "./panels.ts";
import { suggestionsQuery } from "./queries.ts";
import { type Operator, OPERATORS, SEGMENT, withFilter, withoutFilter } from "./state.ts";
import { useLoad, useStore } from "./store.ts";

/** Every dimension the dialog offers: the panels' and each declared event property. */
export function filterDimensions(
  info: SiteInfo | undefined,
): { dimension: string; label: string }[] {
  const keys = new Set((info?.eventTypes ?? []).flatMap((t) => t.params.map((p) => p.key)));
  return [
    ...FILTER_DIMENSIONS,
    ...[...keys].map((key) => ({ dimension: `event:props:${key}`, label: `Property ${key}` })),
  ];
}

export function FilterDialog(props: { onClose: () => void }) {
  const { view, site, update, keyOf, api } = useStore();
  const ref = useRef<HTMLDialogElement>(null);
  const dimensions = filterDimensions(site.value);
  const [dimension, setDimension] = useState(dimensions[0].dimension);
  const [operator, setOperator] = useState<Operator>("is_not");
  const [value, setValue] = useState("");
  const body = suggestionsQuery(view.value, dimension);
  const suggestions = useLoad(keyOf(body, false), () => api.query(body));
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby="filter-title"
      data-testid="filter-dialog"
      onClose={props.onClose}
    >
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          if (value.trim() === "") return;
          update((v) => withFilter(v, [operator, dimension, [value.trim()]]));
          ref.current?.close();
        }}
      >
        <h2 id="filter-title">Add a filter</h2>
        <label>
          Dimension
          <select
            data-testid="filter-dimension"
            value={dimension}
            onChange={(e) => setDimension(e.currentTarget.value)}
          >
            {dimensions.map((d) => <option key={d.dimension} value={d.dimension}>{d.label}
            </option>)}
          </select>
        </label>
        <label>
          Condition
          <select
            data-testid="filter-operator"
            value={operator}
            onChange={(e) => setOperator(e.currentTarget.value as Operator)}
          >
            {OPERATORS.map((o) => <option key={o} value={o}>{OPERATOR_LABELS[o]}</option>)}
          </select>
        </label>
        <label>
          Value
          <input
            data-testid="filter-value"
            list="filter-values"
            value={value}
            required
            autocomplete="off"
            onInput={(e) => setValue(e.currentTarget.value)}
          />
        </label>
        <datalist id="filter-values">
          {(suggestions.data?.results ?? []).map((r) => r.dimensions[0]).filter((v) => v !== null)
            .map((v) => <option key={v} value={v!} />)}
        </datalist>
        <div class="actions">
          <button type="button" class="quiet" onClick={() => ref.current?.close()}>Cancel</button>
          <button type="submit" data-testid="filter-apply">Add filter</button>
        </div>
      </form>
    </dialog>
  );
}

export function FilterBar() {
  const store = useStore();
  const { view, update } = store;
  const [open, setOpen] = useState(false);
  const current = view.value;
  const names = new Map(store.segments.value.map((s) => [s.id, s.name]));
  return (
    <div class="filterbar">
      <FilterChips
        filters={current.filters}
        onRemove={(i) => update((v) => withoutFilter(v, i))}
        segmentNames={names}
      />
      <button
        type="button"
        class="quiet"
        data-testid="add-filter"
        onClick={() => setOpen(true)}
      >
        + Filter
      </button>
      {open && <FilterDialog onClose={() => setOpen(false)} />}
      <SegmentMenu />
    </div>
  );
}

/**
 * The site's segments: apply one (its chip joins the filters), and, with a
 * report key, save the current filters as one, rename or delete one.
 */
export function SegmentMenu() {
  const store = useStore();
  const { segments, segmentMessage, readOnly } = store;
  const [name, setName] = useState("");
  const plain = store.view.value.filters.filter((f) => f[1] !== SEGMENT);
  useEffect(() => {
    if (store.signedIn.value) void store.loadSegments();
  }, [store.signedIn.value]);
  return (
    <div class="segments" data-testid="segments">
      {segments.value.length > 0 && (
        <label>
          Segment
          <select
            data-testid="segment-apply"
            value=""
            onChange={(e) => {
              const id = e.currentTarget.value;
              if (id) store.applySegment(id);
            }}
          >
            <option value="">Apply a segment…</option>
            {segments.value.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
          </select>
        </label>
      )}
      {!readOnly && plain.length > 0 && (
        <form
          class="save-segment"
          onSubmit={(e) => {
            e.preventDefault();
            if (name.trim()) void store.saveSegment(name.trim()).then(() => setName(""));
          }}
        >
          <input
            data-testid="segment-name"
            placeholder="Segment name"
            maxLength={80}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
          <button type="submit" class="quiet" data-testid="segment-save">Save as segment</button>
        </form>
      )}
      {!readOnly && segments.value.length > 0 && (
        <ul class="segment-list" aria-label="Segments">
          {segments.value.map((s) => (
            <li key={s.id} data-testid="segment">
              <span>{s.name}</span>
              <button
                type="button"
                class="quiet"
                aria-label={`Rename segment ${s.name}`}
                onClick={() => {
                  const next = globalThis.prompt?.("New name", s.name)?.trim();
                  if (next && next !== s.name) void store.renameSegment(s.id, next);
                }}
              >
                Rename
              </button>
              <button
                type="button"
                class="quiet"
                aria-label={`Delete segment ${s.name}`}
                onClick={() => void store.deleteSegment(s.id)}
              >
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
      {segmentMessage.value && <p role="alert" class="message">{segmentMessage.value}</p>}
    </div>
  );
}
