"""``python -m gpuport.cli``: the ``gpuport`` command."""

from gpuport.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
