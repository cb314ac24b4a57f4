import KakinCLI

await KakinCommand.run()
