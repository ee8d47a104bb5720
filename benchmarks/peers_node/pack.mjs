// prompt-tsx packing the transcripts benchmarks/peers.py sends on stdin: each message a
// ChatMessage at its relevance as priority, a tool call kept with its results
// (useKeepWith), sizes from the benchmark's table. Prints {name: {ids, median_s}}.
import * as tsx from "@vscode/prompt-tsx";

const { PromptElement, PromptRenderer, SystemMessage, UserMessage, AssistantMessage,
  ToolMessage, OutputMode, useKeepWith } = tsx;
const repeats = Number(process.argv[2] || "9");
const cases = JSON.parse(await new Promise((done) => {
  let text = "";
  process.stdin.on("data", (chunk) => { text += chunk; });
  process.stdin.on("end", () => done(text));
}));

class Transcript extends PromptElement {
  render() {
    const pieces = [];
    const keepers = new Map();
    for (const m of this.props.messages) {
      const text = `${m.id}\n${m.content}`;
      const props = { priority: m.priority };
      if (m.role === "system") {
        pieces.push(vscpp(SystemMessage, props, text));
      } else if (m.role === "assistant") {
        const calls = (m.calls || []).map((call) => {
          const KeepWith = useKeepWith();
          keepers.set(call.id, KeepWith);
          return { id: call.id, type: "function", keepWith: KeepWith,
            function: { name: call.name, arguments: "{}" } };
        });
        pieces.push(vscpp(AssistantMessage, calls.length ? { ...props, toolCalls: calls } : props, text));
      } else if (m.role === "tool") {
        const KeepWith = keepers.get(m.call);
        const message = vscpp(ToolMessage, { ...props, toolCallId: m.call }, text);
        pieces.push(KeepWith ? vscpp(KeepWith, {}, message) : message);
      } else {
        pieces.push(vscpp(UserMessage, props, text));
      }
    }
    return vscpp(vscppf, {}, ...pieces);
  }
}

function tokenizer(sizes) {
  const of = (text) => sizes.get(text) ?? Math.ceil(text.length / 4);
  return {
    mode: OutputMode.Raw,
    tokenLength: (part) => (part.type === 1 || part.text !== undefined ? of(part.text) : 0),
    countMessageTokens: (message) =>
      message.content.reduce((total, part) => total + (part.text !== undefined ? of(part.text) : 0), 0),
  };
}

const out = {};
for (const c of cases) {
  const sizes = new Map(c.messages.map((m) => [`${m.id}\n${m.content}`, m.tokens]));
  const endpoint = { modelMaxPromptTokens: c.budget };
  const props = { messages: c.messages };
  const run = async () => {
    const renderer = new PromptRenderer(endpoint, Transcript, props, tokenizer(sizes));
    return renderer.render();
  };
  let result = await run();
  const times = [];
  for (let k = 0; k < repeats; k++) {
    const started = process.hrtime.bigint();
    result = await run();
    times.push(Number(process.hrtime.bigint() - started) / 1e9);
  }
  times.sort((a, b) => a - b);
  const ids = [];
  for (const message of result.messages) {
    for (const part of message.content) {
      if (part.text !== undefined) ids.push(part.text.split("\n", 1)[0]);
    }
  }
  out[c.name] = { ids, median_s: times[Math.floor(times.length / 2)] };
}
process.stdout.write(JSON.stringify(out));
