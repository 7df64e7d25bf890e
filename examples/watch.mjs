// node examples/watch.mjs [COUNT]: print the board's events as they happen (one JSON per line);
// stop after COUNT state changes, or run until Ctrl-C.
import { Bridge } from "./cribboard.mjs";

const count = Number(process.argv[2] || Infinity);
let changes = -1; // the first state is the snapshot, not a change
const unsubscribe = await new Bridge().subscribe((message) => {
  console.log(JSON.stringify(message));
  if (message.type === "state" && ++changes >= count) unsubscribe();
});
console.error("subscribed");
