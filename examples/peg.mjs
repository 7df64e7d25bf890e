// node examples/peg.mjs [PLAYER [POINTS]]: score points on the board through the bridge.
import { Bridge } from "./cribboard.mjs";

const [player = "0", points = "5"] = process.argv.slice(2);
const board = new Bridge();
const { state } = await board.peg(/^\d+$/.test(player) ? Number(player) : player, Number(points));
console.log(`front pegs: ${state.front.join(" ")}  (back: ${state.back.join(" ")})`);
