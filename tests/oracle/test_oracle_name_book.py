"""A closed episode's simulator is freed: the name book kept per env does not keep it."""

from __future__ import annotations

import gc
import weakref

from agentic_env.envs.sim_env import SimEnv
from agentic_env.oracle import name_book as books


def test_the_name_book_does_not_keep_its_env_alive() -> None:
    books_before = len(books._BOOKS)  # other tests' envs may still be alive in this process
    env = SimEnv(task="sorting")
    env.reset(seed=0)
    book = books.name_book(env)
    assert book.ids
    gone = weakref.ref(env)
    env.close()
    del env, book
    gc.collect()
    assert gone() is None
    assert len(books._BOOKS) <= books_before
