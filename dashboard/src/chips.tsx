/** The filters as removable chips, said in words (`Country is Germany`). */
import { valueLabel } from "./format.ts";
import { dimensionLabel, OPERATOR_LABELS } from "./panels.ts";
import type { Filter } from "./state.ts";

/** A chip's words: `Channel is paid`, `Country is Germany`. */
export function filterLabel(filter: Filter): string {
  const [operator, dimension, values] = filter;
  const shown = values.map((v) => valueLabel(dimension, v)).join(" or ");
  return `${dimensionLabel(dimension)} ${OPERATOR_LABELS[operator]} ${shown}`;
}

export function FilterChips(
  props: { filters: Filter[]; onRemove: (index: number) => void },
) {
  if (props.filters.length === 0) return null;
  return (
    <ul class="chips" aria-label="Filters" data-testid="filters">
      {props.filters.map((filter, i) => (
        <li key={filter.join("|")} class="chip" data-testid="filter">
          <span>{filterLabel(filter)}</span>
          <button
            type="button"
            class="remove"
            aria-label={`Remove filter: ${filterLabel(filter)}`}
            onClick={() =>
              props.onRemove(i)}
          >
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}
