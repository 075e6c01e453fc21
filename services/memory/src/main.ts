import { runServiceProcess } from "@avatar/runtime";
import { memoryModule } from "./index.js";

await runServiceProcess(memoryModule);
