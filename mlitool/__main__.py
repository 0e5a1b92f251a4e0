from mlitool.cli import main

main()
