; Reorientation domain: turn an object (mug, bottle, box, ...) into a requested pose.
;
; What each predicate means on the table:
;   (in-pose ?o ?p)   item ?o rests on the table in pose ?p. Poses are objects of type pose
;                     that each problem declares, e.g. upright, on-side, upside-down,
;                     handle-left, handle-right; an item is in exactly one pose while it rests.
;   (hand-empty)      the gripper holds nothing.
;   (holding ?o)      item ?o is in the gripper (it has left its pose).
;
; (pick ?o ?p) grasps ?o resting in pose ?p; (place-in-pose ?o ?p) sets the held ?o down in
; pose ?p (the grasp and the wrist rotation that achieve it are the motion layer's concern).
; The manipulated things are of type item: "object" is PDDL's root type, of which item and
; pose are both subtypes, so a pose cannot be passed where an item is expected.
(define (domain reorientation)
  (:requirements :strips :typing)
  (:types item pose - object)
  (:predicates
   (in-pose ?o - item ?p - pose)
   (hand-empty)
   (holding ?o - item))

  (:action pick
   :parameters (?o - item ?p - pose)
   :precondition (and (hand-empty)
                      (in-pose ?o ?p))
   :effect (and (holding ?o)
                (not (hand-empty))
                (not (in-pose ?o ?p))))

  (:action place-in-pose
   :parameters (?o - item ?p - pose)
   :precondition (holding ?o)
   :effect (and (in-pose ?o ?p)
                (hand-empty)
                (not (holding ?o)))))
