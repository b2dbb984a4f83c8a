// For the startup benchmark (bench/app): when the UI's script began to run, before any other
// module of the bundle was evaluated (main.ts imports this first).
performance.mark("script");
