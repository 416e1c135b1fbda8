/**
 * Realistic content for the content benchmark: one page of 10 sections × 10
 * blocks in three languages, blocks of every common type.
 */
export const BENCH_KEY = "pk_" + "be0c".repeat(8);
export const HOT_PATH = "/content/v1/pages/home";

const LANGS = ["en", "de", "fr"];
const words = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => ["coffee", "roast", "bean", "fresh", "cup"][(i + seed) % 5])
    .join(" ");
const text = (n: number, seed: number) =>
  Object.fromEntries(LANGS.map((l, i) => [l, `${l}: ${words(n, seed + i)}`]));

function block(section: number, index: number) {
  const marker = `block_${index}`;
  const name = `Block ${section}.${index}`;
  const seed = section * 10 + index;
  switch (index % 5) {
    case 0:
      return { marker, name, type: "text", content: text(8, seed) };
    case 1:
      return {
        marker,
        name,
        type: "html",
        content: Object.fromEntries(
          LANGS.map((l) => [l, `<p>${words(30, seed)} <strong>${l}</strong></p>`]),
        ),
      };
    case 2:
      return {
        marker,
        name,
        type: "image",
        multilang: true,
        content: Object.fromEntries(LANGS.map((l) => [l, `https://cdn.example/${seed}-${l}.webp`])),
      };
    case 3:
      return {
        marker,
        name,
        type: "link",
        content: { url: `/page/${seed}`, target: "_self", title: text(2, seed) },
      };
    default:
      return {
        marker,
        name,
        type: "object",
        fields: [
          { marker: "caption", type: "text" },
          { marker: "price", type: "number" },
          { marker: "photo", type: "image" },
        ],
        content: {
          caption: text(4, seed),
          price: seed * 1.5,
          photo: { file: `https://cdn.example/${seed}.webp` },
        },
      };
  }
}

export function benchManifest(): unknown {
  return {
    site: { id: "bench", name: "Benchmark site", languages: LANGS, domains: ["bench.example"] },
    siteKeys: [BENCH_KEY],
    pages: [{
      marker: "home",
      href: "/",
      sections: Array.from({ length: 10 }, (_, s) => ({
        marker: `section_${s}`,
        show: true,
        blocks: Array.from({ length: 10 }, (_, b) => block(s, b)),
      })),
    }],
  };
}
