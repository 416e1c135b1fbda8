/**
 * The panels side by side and their tabs: one declaration each, the
 * dimension a tab lists, what a row without a value is called, and which
 * metrics its full list shows. The components only read this table.
 */
import type { FixedDimension, VisitAttributeName } from "../../services/lib/stats/vocabulary.ts";
import type { MetricName, Operator, PanelId } from "./state.ts";

export interface Tab {
  id: string;
  /** The tab's name (plural), and one value's (a filter chip's). */
  label: string;
  name: string;
  /** A dimension of the API; event:props stands for event:props:KEY of the chosen property. */
  dimension: FixedDimension | "event:props";
  /** The row without a value: its label, or undefined to leave it out of the list. */
  none?: string;
  /** The metrics of the full list ("more"); the short list shows the first. */
  metrics: MetricName[];
  /** Tabs of a group are chosen from one menu (the UTM tags). */
  group?: string;
}

export interface PanelDef {
  id: PanelId;
  title: string;
  tabs: Tab[];
}

const VISIT_METRICS: MetricName[] = [
  "visitors",
  "visits",
  "pageviews",
  "bounce_rate",
  "visit_duration",
];
const PAGE_METRICS: MetricName[] = ["visitors", "pageviews"];
const AD_METRICS: MetricName[] = ["visitors", "visits", "events", "leads", "revenue"];

function visitTab(id: VisitAttributeName, label: string, name: string, none?: string): Tab {
  return { id, label, name, dimension: `visit:${id}`, none, metrics: VISIT_METRICS };
}

export const PANELS: PanelDef[] = [
  {
    id: "sources",
    title: "Sources",
    tabs: [
      visitTab("channel", "Channels", "Channel", "(unknown)"),
      visitTab("source", "Sources", "Source", "Direct / none"),
      visitTab("referrer", "Referrers", "Referrer"),
      { ...visitTab("utm_source", "UTM source", "UTM source"), group: "UTM tags" },
      { ...visitTab("utm_medium", "UTM medium", "UTM medium"), group: "UTM tags" },
      { ...visitTab("utm_campaign", "UTM campaign", "UTM campaign"), group: "UTM tags" },
      { ...visitTab("utm_term", "UTM term", "UTM term"), group: "UTM tags" },
      { ...visitTab("utm_content", "UTM content", "UTM content"), group: "UTM tags" },
    ],
  },
  {
    id: "pages",
    title: "Pages",
    tabs: [
      {
        id: "top",
        label: "Top pages",
        name: "Page",
        dimension: "event:page",
        metrics: PAGE_METRICS,
      },
      visitTab("entry_page", "Entry pages", "Entry page"),
      visitTab("exit_page", "Exit pages", "Exit page"),
    ],
  },
  {
    id: "locations",
    title: "Locations",
    tabs: [visitTab("country", "Countries", "Country", "(unknown)")],
  },
  {
    id: "devices",
    title: "Devices",
    tabs: [
      visitTab("device", "Devices", "Device", "(unknown)"),
      visitTab("browser", "Browsers", "Browser", "(unknown)"),
      visitTab("os", "Systems", "System", "(unknown)"),
      visitTab("screen", "Screens", "Screen", "(unknown)"),
    ],
  },
  {
    id: "events",
    title: "Events",
    tabs: [
      {
        id: "events",
        label: "Events",
        name: "Event",
        dimension: "event:name",
        metrics: ["visitors", "events", "revenue"],
      },
      // The dimension is event:props:KEY of the chosen event and property.
      {
        id: "props",
        label: "Properties",
        name: "Property",
        dimension: "event:props",
        metrics: ["visitors", "events"],
      },
    ],
  },
  {
    id: "ads",
    title: "Ad links",
    tabs: [{
      id: "ad_link",
      label: "Ad links",
      name: "Ad link",
      dimension: "visit:ad_link",
      metrics: AD_METRICS,
    }],
  },
];

export function panelOf(id: PanelId): PanelDef {
  return PANELS.find((p) => p.id === id)!;
}

/** The panel's chosen tab (the first when the view names none or one it does not have). */
export function tabOf(panel: PanelDef, chosen: string | undefined): Tab {
  return panel.tabs.find((t) => t.id === chosen) ?? panel.tabs[0];
}

/** Every dimension a filter can name, with its label, for the filter dialog and the chips. */
export const FILTER_DIMENSIONS: { dimension: FixedDimension; label: string }[] = [
  ...PANELS.flatMap((p) =>
    p.tabs.flatMap((t) =>
      t.dimension === "event:props" ? [] : [{ dimension: t.dimension, label: t.name }]
    )
  ),
  { dimension: "visit:visitor_type", label: "Visitor type" },
];

/** How a chip names a filter's dimension: `Channel`, `Page`, `purchase property product`. */
export function dimensionLabel(dimension: string): string {
  if (dimension.startsWith("event:props:")) return `Property ${dimension.slice(12)}`;
  return FILTER_DIMENSIONS.find((d) => d.dimension === dimension)?.label ?? dimension;
}

export const OPERATOR_LABELS: Record<Operator, string> = {
  is: "is",
  is_not: "is not",
  contains: "contains",
  contains_not: "does not contain",
};
