import KakinCLI

await KakinCommand.main()
