import KakinCLI

KakinCommand.runTasksOnEventLoops(arguments: CommandLine.arguments)
await KakinCommand.run()
