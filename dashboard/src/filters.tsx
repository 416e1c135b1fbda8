/// <reference lib="dom" />
/**
 * The filters: one removable chip each, and a small dialog for the filters
 * a click on a row cannot make (is not, contains, does not contain; any
 * dimension, an event's declared properties included), with the range's
 * values of the chosen dimension as suggestions.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api, type SiteInfo } from "./api.ts";
import { FilterChips } from "./chips.tsx";
import { FILTER_DIMENSIONS, OPERATOR_LABELS } from "./panels.ts";
import { suggestionsQuery } from "./queries.ts";
import { type Operator, OPERATORS, withFilter, withoutFilter } from "./state.ts";
import { keyOf, site, update, useLoad, view } from "./store.ts";

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
  const [open, setOpen] = useState(false);
  const current = view.value;
  return (
    <div class="filterbar">
      <FilterChips
        filters={current.filters}
        onRemove={(i) => update((v) => withoutFilter(v, i))}
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
    </div>
  );
}
