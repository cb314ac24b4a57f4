import KakinCLI

KakinCommand.runTasksOnEventLoops()
await KakinCommand.run()
