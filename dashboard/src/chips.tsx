/** The filters as removable chips, said in words (`Country is Germany`). */
import { valueLabel } from "./format.ts";
import { dimensionLabel, OPERATOR_LABELS } from "./panels.ts";
import { type Filter, SEGMENT } from "./state.ts";

/** A chip's words: `Channel is paid`, `Country is Germany`, `Segment Germany mobile`. */
export function filterLabel(filter: Filter, segmentNames?: ReadonlyMap<string, string>): string {
  const [operator, dimension, values] = filter;
  if (dimension === SEGMENT) {
    const names = values.map((id) => segmentNames?.get(id) ?? id).join(" or ");
    return operator === "is_not" ? `Not segment ${names}` : `Segment ${names}`;
  }
  const shown = values.map((v) => valueLabel(dimension, v)).join(" or ");
  return `${dimensionLabel(dimension)} ${OPERATOR_LABELS[operator]} ${shown}`;
}

export function FilterChips(
  props: {
    filters: Filter[];
    onRemove: (index: number) => void;
    /** Segment ids to names, for the chips of applied segments. */
    segmentNames?: ReadonlyMap<string, string>;
  },
) {
  if (props.filters.length === 0) return null;
  return (
    <ul class="chips" aria-label="Filters" data-testid="filters">
      {props.filters.map((filter, i) => (
        <li
          key={filter.join("|")}
          class={filter[1] === SEGMENT ? "chip segment" : "chip"}
          data-testid="filter"
        >
          <span>{filterLabel(filter, props.segmentNames)}</span>
          <button
            type="button"
            class="remove"
            aria-label={`Remove filter: ${filterLabel(filter, props.segmentNames)}`}
            onClick={() => props.onRemove(i)}
          >
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}
