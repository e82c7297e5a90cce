"""The ``scan`` stage: one module per kind of file, each declaring its rules and a scanner.

Importing this package loads no scanner: :func:`gpuport.scan.base.scanners_for` imports the
scanners of a kind of file the first time one is scanned, and :mod:`gpuport.scan.catalog`
imports every rule's module (:data:`gpuport.rules.RULE_MODULES`) when all are asked for.
"""
