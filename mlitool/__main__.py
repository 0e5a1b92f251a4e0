from mlitool.cli.entry import main

main()
