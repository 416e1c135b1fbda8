/**
 * A migration's script read as Postgres reads it: its statements one by one
 * (a migration that runs outside a transaction sends them so, since
 * CREATE INDEX CONCURRENTLY may not share a query string with another), and
 * the code of each without comments or string literals (what a check of
 * what a statement does must look at: a comment or a string saying "drop"
 * drops nothing).
 */

/** One statement of a script: its text as written, and its code (comments out, string literals blanked). */
export interface Statement {
  text: string;
  code: string;
}

/**
 * The statements of a script, split at the semicolons outside comments,
 * quoted strings, quoted names and dollar-quoted bodies. Empty statements
 * (only white space or comments) are left out.
 */
export function splitStatements(script: string): Statement[] {
  const statements: Statement[] = [];
  let text = "";
  let code = "";
  let i = 0;
  const push = () => {
    if (code.trim()) statements.push({ text: text.trim(), code: code.replace(/\s+/g, " ").trim() });
    text = "";
    code = "";
  };
  while (i < script.length) {
    const rest = script.slice(i);
    const c = script[i];
    if (rest.startsWith("--")) {
      const end = script.indexOf("\n", i);
      const stop = end < 0 ? script.length : end;
      text += script.slice(i, stop);
      code += " ";
      i = stop;
    } else if (rest.startsWith("/*")) {
      const end = script.indexOf("*/", i + 2);
      const stop = end < 0 ? script.length : end + 2;
      text += script.slice(i, stop);
      code += " ";
      i = stop;
    } else if (c === "'" || c === '"') {
      // A doubled quote inside is the quote itself: the scan simply passes both.
      let j = i + 1;
      while (j < script.length) {
        if (script[j] === c && script[j + 1] === c) j += 2;
        else if (script[j] === c) break;
        else j++;
      }
      const quoted = script.slice(i, j + 1);
      text += quoted;
      // A quoted name is code (it names what a statement works on); a string is a value.
      code += c === '"' ? quoted : "''";
      i = j + 1;
    } else if (c === "$" && /^\$[A-Za-z_]*\$/.test(rest) && !/[\w$]/.test(script[i - 1] ?? "")) {
      const tag = rest.match(/^\$[A-Za-z_]*\$/)![0];
      const end = script.indexOf(tag, i + tag.length);
      const stop = end < 0 ? script.length : end + tag.length;
      // A body (DO, a function) is code too: what runs inside it is what the statement does.
      text += script.slice(i, stop);
      code += script.slice(i, stop);
      i = stop;
    } else if (c === ";") {
      push();
      i++;
    } else {
      text += c;
      code += c;
      i++;
    }
  }
  push();
  return statements;
}
