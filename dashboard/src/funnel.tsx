/// <reference lib="dom" />
/**
 * The funnel: 2 to 8 steps defined in the page (a page path, where * matches
 * any run of characters; a declared event; a lead), and per step the
 * visitors who reached it, the conversion from the first step and the
 * drop-off from the one before, as bars. The steps live in the URL once
 * shown; the funnel takes the view's range and its visit filters only.
 */
import { useEffect, useState } from "preact/hooks";
import { type FunnelStepAnswer } from "./api.ts";
import { formatNumber } from "./format.ts";
import { funnelQuery } from "./queries.ts";
import { funnelFilters, MAX_STEPS, MIN_STEPS, type Step, validStep, type View } from "./state.ts";
import { useLoad, useStore } from "./store.ts";

type Kind = "page" | "event" | "lead";

function kindOf(step: Step): Kind {
  return "page" in step ? "page" : "event" in step ? "event" : "lead";
}

export function stepLabel(step: Step): string {
  if ("page" in step) return `Page ${step.page}`;
  if ("event" in step) return `Event ${step.event}`;
  return "Lead";
}

function StepEditor(
  props: { step: Step; index: number; count: number; onChange: (step?: Step) => void },
) {
  const { site } = useStore();
  const { step, index } = props;
  const events = site.value?.eventTypes ?? [];
  const kind = kindOf(step);
  return (
    <li class="step-edit" data-testid="step-edit">
      <span class="step-number" aria-hidden="true">{index + 1}</span>
      <label>
        <span class="visually-hidden">Step {index + 1} kind</span>
        <select
          value={kind}
          onChange={(e) => {
            const next = e.currentTarget.value as Kind;
            props.onChange(
              next === "page"
                ? { page: "/" }
                : next === "event"
                ? { event: events[0]?.name ?? "" }
                : { lead: true },
            );
          }}
        >
          <option value="page">Page</option>
          <option value="event">Event</option>
          <option value="lead">Lead</option>
        </select>
      </label>
      {"page" in step && (
        <label>
          <span class="visually-hidden">Step {index + 1} page path</span>
          <input
            value={step.page}
            placeholder="/pricing or /blog/*"
            onInput={(e) => props.onChange({ page: e.currentTarget.value })}
          />
        </label>
      )}
      {"event" in step && (
        <label>
          <span class="visually-hidden">Step {index + 1} event</span>
          <select
            value={step.event}
            onChange={(e) => props.onChange({ event: e.currentTarget.value })}
          >
            {events.map((t) => <option key={t.name} value={t.name}>{t.title || t.name}</option>)}
          </select>
        </label>
      )}
      <button
        type="button"
        class="quiet"
        disabled={props.count <= MIN_STEPS}
        aria-label={`Remove step ${index + 1}`}
        onClick={() => props.onChange(undefined)}
      >
        ×
      </button>
    </li>
  );
}

function Bars({ steps }: { steps: FunnelStepAnswer[] }) {
  const first = steps[0]?.visitors ?? 0;
  return (
    <ol class="funnel-bars" data-testid="funnel-result">
      {steps.map((s, i) => (
        <li key={i} data-step={i}>
          <div class="funnel-label">
            <span class="step-name">{i + 1}. {stepLabel(s.step)}</span>
            <span>
              <strong data-testid="funnel-visitors">{formatNumber(s.visitors)}</strong> visitors
            </span>
          </div>
          <div
            class="funnel-bar"
            style={{ "--bar-width": `${first > 0 ? Math.round((s.visitors / first) * 100) : 0}%` }}
            aria-hidden="true"
          />
          <div class="funnel-numbers">
            <span data-testid="funnel-conversion">{s.conversionRate.toFixed(1)}%</span>{" "}
            of the first step
            {i > 0 && (
              <>
                {" · "}
                <span data-testid="funnel-dropoff">{formatNumber(s.dropOff)}</span> dropped off
              </>
            )}
          </div>
        </li>
      ))}
    </ol>
  );
}

const STARTER: Step[] = [{ page: "/" }, { lead: true }];

export function Funnel() {
  const { view, update, keyOf, api } = useStore();
  const current: View = view.value;
  const [draft, setDraft] = useState<Step[]>(current.steps.length ? current.steps : STARTER);
  useEffect(() => {
    if (current.steps.length) setDraft(current.steps);
  }, [JSON.stringify(current.steps)]);
  const body = funnelQuery(current);
  const loaded = useLoad(keyOf(body), () => api.funnel(body!));
  const complete = draft.map(validStep).filter((s) => s !== undefined) as Step[];
  const left = current.filters.length - funnelFilters(current.filters).length;
  return (
    <section class="panel funnel" aria-labelledby="funnel-title" data-testid="funnel">
      <div class="panel-head">
        <h2 id="funnel-title">Funnel</h2>
      </div>
      <form
        class="funnel-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (complete.length >= MIN_STEPS) update((v) => ({ ...v, steps: complete }));
        }}
      >
        <ol class="steps">
          {draft.map((step, i) => (
            <StepEditor
              key={i}
              step={step}
              index={i}
              count={draft.length}
              onChange={(next) =>
                setDraft((d) =>
                  next === undefined
                    ? d.filter((_, j) => j !== i)
                    : d.map((s, j) => j === i ? next : s)
                )}
            />
          ))}
        </ol>
        <div class="actions">
          <button
            type="button"
            class="quiet"
            disabled={draft.length >= MAX_STEPS}
            onClick={() => setDraft((d) => [...d, { page: "/" }])}
          >
            + Step
          </button>
          <button type="submit" data-testid="funnel-show" disabled={complete.length < MIN_STEPS}>
            Show funnel
          </button>
        </div>
      </form>
      {left > 0 && (
        <p class="note">
          Page and event filters do not apply to a funnel: its steps choose the rows.
        </p>
      )}
      {loaded.error && <p class="error" role="alert">{loaded.error}</p>}
      {body && loaded.data && <Bars steps={loaded.data.steps} />}
    </section>
  );
}
